import FuzzMain

/// libFuzzer's entry point: one input through the `model` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModel(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzMain.testOneInput(.model, data, size)
}

/// The executable's entry point (see ``FuzzMain/run(_:_:_:)``).
@_cdecl("fuzz_model_main")
public func fuzzModelMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzMain.run(argc, argv, fuzzModel)
}
