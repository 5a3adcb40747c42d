// What a container client writes to `docker-credential-latchkey ACTION`
// (Registries/CredentialHelperRequest.swift): the first input byte picks the action, the rest is
// stdin; a server URL is then matched against fixed providers' registry_hosts. A token may go
// only to a mapped host, and over plain http only to loopback.
internal import FuzzSupport

@testable internal import LatchkeyCredentialHelpers
@testable internal import LatchkeyProviders
@testable internal import LatchkeyVault

enum Fixed {
    static let actions = CredentialHelperRequest.actions + ["version", ""]
    static let providers = ["registry.example.com", "localhost:5000", "[::1]:5000"].enumerated().map { index, entry in
        let client = OAuthClient(
            issuer: "https://idp\(index).example", endpoints: .init(), clientID: "c", scopes: ["openid"], redirectPath: "/cb/\(index)",
            registryHosts: [try! GitHost.parse(entry).get()])
        return Provider(name: "p\(index)", displayName: "P", kind: .oidc(client), sourceFile: "/p/p\(index).toml")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let first = bytes.first else { return 0 }
    let action = Fixed.actions[Int(first) % Fixed.actions.count]
    do {
        let request = try CredentialHelperRequest(action: action, input: Array(bytes.dropFirst()))
        switch request {
        case .get(let server), .store(let server), .erase(let server):
            if let provider = try server.provider(in: Fixed.providers) {
                precondition(provider.registryHosts.contains(server.host), "answered for a host the provider does not list")
                precondition(server.scheme != "http" || server.host.isLoopback, "a token over plain http beyond loopback")
            }
        case .list: break
        }
    } catch {
        precondition(!String(describing: error).contains("\n"), "an error is more than one line")
    }
    return 0
}

runFuzzer(testOneInput)
