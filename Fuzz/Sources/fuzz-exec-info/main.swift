// What kubectl puts in KUBERNETES_EXEC_INFO for `latchkey kubectl-credential`
// (Kubernetes/ExecCredential.swift): JSON read for `kind`, `apiVersion` and `spec.interactive`.
// An accepted request's answer must carry the version asked for and decode back as JSON.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyBrokerWire

@testable internal import LatchkeyCredentialHelpers
@testable internal import LatchkeyVault

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    do {
        let request = try ExecCredentialRequest(parsing: text)
        let answer = ExecCredential(
            apiVersion: request.apiVersion, token: Secret("fuzz-token"), expiresAt: Date(timeIntervalSince1970: 1e9))
        let json = try ReportJSON.text(of: answer)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        precondition(object?["apiVersion"] as? String == request.apiVersion.rawValue, "the answer's version is not the request's")
    } catch let error as ExecCredentialError {
        precondition(!error.description.contains("\n"), "an error is more than one line")
    } catch {
        preconditionFailure("an error that is not an ExecCredentialError: \(error)")
    }
    return 0
}

runFuzzer(testOneInput)
