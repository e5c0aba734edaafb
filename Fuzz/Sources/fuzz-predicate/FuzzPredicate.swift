import StrataFuzzing

/// libFuzzer's entry point: one input through the `predicate` target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzDriver.runBlocking(.predicate, data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// libFuzzer's driver: parses its options, then calls the callback with
/// each input (in every libFuzzer since LLVM 11).
@_silgen_name("LLVMFuzzerRunDriver")
func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable with `main` aliased to `<module>_main`, so
/// libFuzzer's own `main` is not linked: this starts libFuzzer's driver.
@_cdecl("fuzz_predicate_main")
public func fuzzPredicateMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return llvmFuzzerRunDriver(&argc, &argv, fuzzPredicate)
}
