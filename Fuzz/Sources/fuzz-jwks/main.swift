// A provider's JWK Set (OAuth/JSONWebKeySet.swift): every key it yields is tried with every
// algorithm, so key material of any size reaches the RSA and EC constructors.
internal import FuzzSupport

@testable internal import LatchkeyOAuth
@testable internal import LatchkeyVault

enum Fixed {
    static let input = Array("header.claims".utf8)
    /// Signature lengths of ES256, ES384 and RS2048.
    static let signatures = [64, 96, 256].map { [UInt8](repeating: 0x5A, count: $0) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let keySet = try? JSONWebKeySet(json: fuzzInput(data, size)) else { return 0 }
    for key in keySet.keys {
        for algorithm in JWSAlgorithm.allCases where key.canVerify(algorithm, keyID: key.keyID) {
            for signature in Fixed.signatures {
                precondition(!key.verify(signature, over: Fixed.input, algorithm: algorithm), "a made-up signature verified")
            }
        }
    }
    return 0
}

runFuzzer(testOneInput)
