// The authorization response at the redirect URI (OAuth/AuthorizationResponse.swift): what the
// loopback listener receives and what a person pastes.
//
// Input: the `Host` header on the first line, the request-target after it; the whole input is
// also tried as a pasted URL. `@STATE@` stands for the request's state, so inputs get past the
// state check to the issuer, error and code handling.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyOAuth
internal import LatchkeyProviders
internal import LatchkeyVault

enum Fixed {
    /// RFC 9207 enforced (discovery promised `iss`), and not (no discovery at all).
    static let pending = [
        PendingAuthorization(
            provider: FixedProvider.openID,
            metadata: ServerMetadata(
                issuer: FixedProvider.openID.issuer, authorizationEndpoint: URL(string: "https://idp.example.com/auth")!,
                tokenEndpoint: URL(string: "https://idp.example.com/token")!, requiresIssuerParameter: true),
            redirectURI: FixedProvider.openID.redirectURI(port: 49152)),
        PendingAuthorization(
            provider: FixedProvider.plainOAuth,
            metadata: try! ServerMetadata.resolve(provider: FixedProvider.plainOAuth, document: nil),
            redirectURI: FixedProvider.plainOAuth.redirectURI(port: 8080)),
    ]
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = String(decoding: fuzzInput(data, size), as: UTF8.self)
    for pending in Fixed.pending {
        let text = input.replacingOccurrences(of: "@STATE@", with: pending.state.exposedValue)
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let request = RedirectRequest(target: String(lines[lines.count - 1]), host: lines.count > 1 ? String(lines[0]) : nil)
        check(pending, request)
        if let pasted = try? RedirectRequest(pastedURL: text) { check(pending, pasted) }
    }
    return 0
}

/// Validates `request`; an accepted code must have come with the right path and state.
func check(_ pending: PendingAuthorization, _ request: RedirectRequest) {
    do {
        let code = try pending.validate(request)
        precondition(!code.value.exposedValue.isEmpty, "an empty code was accepted")
        precondition(request.target.hasPrefix(pending.provider.redirectPath), "a code was accepted at another path")
    } catch {
        _ = error.description
    }
}

runFuzzer(testOneInput)
