import FuzzMain

/// libFuzzer's entry point: one input through the `predicate` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzMain.testOneInput(.predicate, data, size)
}

/// The executable's entry point (see ``FuzzMain/run(_:_:_:)``).
@_cdecl("fuzz_predicate_main")
public func fuzzPredicateMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzMain.run(argc, argv, fuzzPredicate)
}
