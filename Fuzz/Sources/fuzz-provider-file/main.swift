// One TOML file read as a providers.d file (Providers/ProviderFileParser.swift) and as config.toml
// (Keystore/LatchkeyConfiguration.swift): a provider or settings out, or every error; both pass
// the same bounds first (Support/TOMLPreflight.swift).
internal import Foundation
internal import FuzzSupport

@testable internal import LatchkeyOAuth
@testable internal import LatchkeyProviders
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
    do {
        let configuration = try LatchkeyConfiguration.checked(text, path: "/fuzz/config.toml", environment: ["HOME": "/home/fuzz"])
        // A mapping's directory is absolute whatever the file wrote (`~/…` expanded, no relative path).
        precondition(configuration.directories.mappings.allSatisfy { $0.path.hasPrefix("/") }, "a relative directory was accepted")
    } catch {
        precondition(!error.errors.isEmpty, "config.toml was refused without a reason")
    }
    return 0
}

runFuzzer(testOneInput)
