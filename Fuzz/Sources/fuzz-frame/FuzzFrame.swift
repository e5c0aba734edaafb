import FuzzMain

/// libFuzzer's entry point: one input through the `frame` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzMain.testOneInput(.frame, data, size)
}

/// The executable's entry point (see ``FuzzMain/run(_:_:_:)``).
@_cdecl("fuzz_frame_main")
public func fuzzFrameMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzMain.run(argc, argv, fuzzFrame)
}
