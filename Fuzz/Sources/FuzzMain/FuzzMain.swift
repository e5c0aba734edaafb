import StrataFuzzing

/// libFuzzer's driver: parses its options, then calls the callback with
/// each input (in every libFuzzer since LLVM 11).
@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// What every driver's two entry points do.
public enum FuzzMain {
    /// One input through `target` (the body of `LLVMFuzzerTestOneInput`).
    public static func testOneInput(_ target: FuzzTarget, _ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        FuzzDriver.runBlocking(target, data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }

    /// Starts libFuzzer's driver with `callback`. SwiftPM links an
    /// executable with `main` aliased to `<module>_main`, so libFuzzer's
    /// own `main` is not linked: each driver's `<module>_main` calls this.
    public static func run(
        _ argc: CInt,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt {
        var argc = argc
        var argv = argv
        return llvmFuzzerRunDriver(&argc, &argv, callback)
    }
}
