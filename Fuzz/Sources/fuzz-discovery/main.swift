// A discovery document (OAuth/ServerMetadata.swift), decoded and laid over an `oidc` provider
// that leaves everything to discovery and a plain OAuth 2.0 one with explicit endpoints.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyOAuth
internal import LatchkeyProviders
internal import LatchkeyVault

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let document = try? JSONDecoder().decode(DiscoveryDocument.self, from: Data(fuzzInput(data, size))) else { return 0 }
    for provider in [FixedProvider.openID, FixedProvider.plainOAuth] {
        do {
            let metadata = try ServerMetadata.resolve(provider: provider, document: document)
            precondition(metadata.issuer == provider.issuer, "metadata from another issuer was accepted")
        } catch {
            _ = error.description
        }
    }
    return 0
}

runFuzzer(testOneInput)
