import FuzzMain

/// libFuzzer's entry point: one input through the `value` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValue(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzMain.testOneInput(.value, data, size)
}

/// The executable's entry point (see ``FuzzMain/run(_:_:_:)``).
@_cdecl("fuzz_value_main")
public func fuzzValueMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzMain.run(argc, argv, fuzzValue)
}
