// One providers.d file (Providers/ProviderFileParser.swift): TOML in, a provider or every error out.
internal import Foundation
internal import FuzzSupport

@testable internal import LatchkeyCore
@testable internal import LatchkeyVault

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    switch ProviderFileParser().parse(text, file: "/fuzz/providers.d/fuzz.toml") {
    case .success(let provider):
        let oauth: OAuthProvider
        switch provider.kind {
        case .oidc(let client), .oauth2(let client): oauth = OAuthProvider(provider, client: client)
        case .firebase: return 0
        }
        // The mix-up defence rests on the redirect path being one a browser sends back unchanged.
        precondition(ProviderFileParser.isValidRedirectPath(oauth.redirectPath), "an invalid redirect path was accepted")
        precondition(oauth.loopbackPorts.allSatisfy { (1024...65_535).contains($0) }, "a port outside 1024-65535 was accepted")
        _ = ServerMetadata.discoveryURL(for: oauth)
        _ = oauth.redirectURITemplate
        _ = URLComponents(string: oauth.redirectURI(port: 65_535))!.port!
    case .failure(let errors):
        precondition(!errors.errors.isEmpty, "a file was refused without a reason")
        _ = errors.errors.map(\.description)
    }
    return 0
}

runFuzzer(testOneInput)
