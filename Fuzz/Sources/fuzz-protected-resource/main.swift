// A protected resource's metadata (RFC 9728; LatchkeyOAuth/ProtectedResourceMetadata.swift) as
// `mcp add` reads it (MCPServerDiscovery.resourceMetadata): decoded, its `resource` compared with
// the server's canonical URI, then its authorization servers and scopes checked as the draft does.
// Metadata accepted must name the server it was fetched for; a canonical URI must be canonical.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyOAuth
internal import LatchkeySupport
internal import LatchkeyVault

@testable internal import LatchkeyMCP

enum Fixed {
    static let server = URL(string: "https://mcp.example.com/mcp")!
    static let resource = ProtectedResourceMetadata.canonical(server)!
    static let challenge = BearerChallenge(parameters: [
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    ])
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = fuzzInput(data, size)
    let discovery = MCPServerDiscovery(
        engine: OAuthEngine(transport: FixedAnswer(HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: body))))
    let read = waitFor { () -> Result<ProtectedResourceMetadata, any Error> in
        do {
            return .success(try await discovery.resourceMetadata(for: Fixed.server, resource: Fixed.resource, challenge: Fixed.challenge))
        } catch {
            return .failure(error)
        }
    }
    // Whatever the answer said, its resource's canonical form reads back as itself.
    if let metadata = try? JSONDecoder().decode(ProtectedResourceMetadata.self, from: Data(body)),
        let named = URL(string: metadata.resource), let canonical = ProtectedResourceMetadata.canonical(named)
    {
        precondition(
            URL(string: canonical).flatMap(ProtectedResourceMetadata.canonical) == canonical, "a canonical URI is not canonical")
        _ = ProtectedResourceMetadata.wellKnownURLs(for: named)
    }
    switch read {
    case .success(let metadata):
        precondition(URL(string: metadata.resource).flatMap(ProtectedResourceMetadata.canonical) == Fixed.resource, "another resource")
        for server in metadata.authorizationServers ?? [] {
            if case .success(let url) = EndpointURL.validate(server, namedBy: Fixed.server) {
                precondition(url.host.map { !EndpointURL.isLoopback($0) } ?? false, "a remote resource named a loopback issuer")
            }
        }
        _ = (metadata.scopesSupported ?? []).allSatisfy(ScopeToken.isValid)
    case .failure(let error):
        _ = String(describing: error)
    }
    return 0
}

runFuzzer(testOneInput)
