internal import CFuzzerDriver

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Hands control to libFuzzer, which calls `testOneInput` with each input; exits with its status.
///
/// SwiftPM links an executable's top-level code as `main` (`--defsym main=<module>_main`), so
/// libFuzzer's own `main` never runs: the top-level code calls its driver instead. Each target
/// still exports `LLVMFuzzerTestOneInput`, which libFuzzer's (unused) `main` refers to.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// One input's bytes (libFuzzer passes a null pointer for the empty input).
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}
