// What git writes to `latchkey git-credential` (Git/GitCredentialRequest.swift): key=value lines,
// `url=` split into its parts, then the host read by `GitHost.parse` and matched against fixed
// providers' git_hosts.
internal import FuzzSupport

@testable internal import LatchkeyCredentialHelpers
@testable internal import LatchkeyProviders
@testable internal import LatchkeyVault

enum Fixed {
    static let providers = ["gitlab.example.com", "git.example.com:8443", "[::1]:3000"].enumerated().map { index, entry in
        let client = OAuthClient(
            issuer: "https://idp\(index).example", endpoints: .init(), clientID: "c", scopes: ["openid"], redirectPath: "/cb/\(index)",
            gitHosts: [try! GitHost.parse(entry).get()])
        return Provider(name: "p\(index)", displayName: "P", kind: .oidc(client), sourceFile: "/p/p\(index).toml")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    do {
        let request = try GitCredentialRequest(parsing: text)
        if let provider = try request.provider(in: Fixed.providers) {
            // Only https answers, or http to a loopback host.
            precondition(request.scheme == "https" || (request.scheme == "http" && provider.name == "p2"), "answered a plain request")
        }
    } catch {
        _ = String(describing: error)
    }
    if case .success(let host) = GitHost.parse(text) {
        precondition(GitHost.parse(host.description) == .success(host), "a parsed host does not read back the same")
    }
    return 0
}

runFuzzer(testOneInput)
