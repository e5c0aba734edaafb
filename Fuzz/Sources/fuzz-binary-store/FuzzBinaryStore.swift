import FuzzMain

/// libFuzzer's entry point: one input through the `binary-store` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryStore(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzMain.testOneInput(.binaryStore, data, size)
}

/// The executable's entry point (see ``FuzzMain/run(_:_:_:)``).
@_cdecl("fuzz_binary_store_main")
public func fuzzBinaryStoreMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzMain.run(argc, argv, fuzzBinaryStore)
}
