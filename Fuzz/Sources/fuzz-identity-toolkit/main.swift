// Identity Toolkit and securetoken answers (Firebase/FirebaseWire.swift, the decoding in
// Firebase/FirebaseBackend.swift) and Google's error envelope
// (Firebase/FirebaseErrorEnvelope.swift): one body, read as every response type.
internal import Foundation
internal import FuzzSupport

@testable internal import LatchkeySecondFactor
@testable internal import LatchkeyVault

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = fuzzInput(data, size)
    let json = Data(body)
    let decoder = JSONDecoder()
    if let signIn = try? decoder.decode(FirebaseWire.SignInResponse.self, from: json) {
        _ = signIn.expiresIn.flatMap { Int($0) }
        if let message = signIn.errorMessage { _ = FirebaseErrorEnvelope(message: message).secondFactorError.description }
        for hint in (signIn.mfaInfo ?? []).compactMap(\.hint) { _ = hint.summary }
    }
    if let lookup = try? decoder.decode(FirebaseWire.LookupResponse.self, from: json) {
        for hint in (lookup.users?.first?.mfaInfo ?? []).compactMap(\.hint) { _ = hint.summary }
    }
    _ = try? decoder.decode(FirebaseWire.StartSignInResponse.self, from: json)
    _ = try? decoder.decode(FirebaseWire.StartEnrollmentResponse.self, from: json)
    _ = try? decoder.decode(FirebaseWire.FinalizeResponse.self, from: json)
    if let grant = try? decoder.decode(FirebaseWire.GrantTokenResponse.self, from: json) {
        _ = grant.expiresIn.flatMap { Int($0) }
    }
    if let envelope = FirebaseErrorEnvelope(body: body) {
        _ = envelope.code
        _ = envelope.detail
        _ = envelope.secondFactorError.description
    }
    return 0
}

runFuzzer(testOneInput)
