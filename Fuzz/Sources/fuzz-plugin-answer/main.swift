// An MFA plugin's answer line (Firebase/ExecBackend.swift): the first line of its output,
// read as the answer to a first factor (tokens, hints or error).
internal import FuzzSupport

@testable internal import LatchkeySecondFactor
@testable internal import LatchkeyVault

enum Fixed {
    static let backend = ExecBackend(path: "/usr/libexec/latchkey-fuzz-plugin", provider: "fuzz")
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    do {
        let answer = try Fixed.backend.answer(from: fuzzInput(data, size))
        do {
            switch try Fixed.backend.firstFactorOutcome(answer) {
            case .signedIn(let tokens):
                precondition(!tokens.idToken.exposedValue.isEmpty, "tokens without an ID token were accepted")
            case .secondFactorRequired(let hints, _):
                _ = hints.map(\.summary)
            }
        } catch {
            _ = error.description
        }
    } catch {
        _ = error.description
    }
    return 0
}

runFuzzer(testOneInput)
