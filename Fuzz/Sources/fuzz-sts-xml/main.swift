// AWS STS's answer to AssumeRoleWithWebIdentity (LatchkeyClouds/StrictXML.swift, read by
// AWSRoleRequest.credential(from:now:) in LatchkeyClouds/AWSWebIdentity.swift), as a success and
// as a server error. The first byte picks the status; credentials read have all four fields as
// visible ASCII, and expire later than five minutes from now.
internal import Foundation
internal import FuzzSupport
internal import LatchkeySupport

@testable internal import LatchkeyClouds
@testable internal import LatchkeyVault

enum Fixed {
    static let request = AWSRoleRequest(
        roleARN: "arn:aws:iam::123456789012:role/deploy", sessionName: "alice", duration: nil,
        endpoint: URL(string: "https://sts.test.example/sts")!)
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let statuses = [200, 400, 403, 500, 503]
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let status = Fixed.statuses[Int(control) % Fixed.statuses.count]
    let body = Array(input.dropFirst())
    do {
        let credential = try Fixed.request.credential(from: HTTPResponse(status: status, body: body), now: Fixed.now)
        precondition((200..<300).contains(status), "credentials read from an error status")
        for field in [credential.accessKeyID, credential.secretAccessKey.exposedValue, credential.sessionToken.exposedValue] {
            precondition(!field.isEmpty && field.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "a field that is not visible ASCII")
        }
        precondition(credential.expiresAt.timeIntervalSince(Fixed.now) > AWSRoleCredential.margin, "credentials that expire now")
    } catch {
        _ = (error.description, error.category)
    }
    return 0
}

runFuzzer(testOneInput)
