public import LatchkeyVault

/// Why Latchkey could not register itself at a provider (RFC 7591), or use the client it
/// registered. The server's own refusals are `TokenEndpointError`s naming the registration
/// endpoint; registration access tokens never appear in any of these.
public enum ClientRegistrationError: LatchkeyError, Equatable {
    /// Discovery lists no `registration_endpoint`.
    case noEndpoint(provider: String)
    /// The server registered a client it then would not take as a public one, even after the
    /// second try; `problem` says what it got wrong, `leftBehind` the client IDs not deleted.
    case notPublic(provider: String, problem: String, leftBehind: [String])
    /// A device sign-in was asked for, which the registered client was not registered for.
    case deviceNotRegistered(provider: String)
    /// An account of a `registration = "dynamic"` provider, but no registered client in the vault.
    case notRegistered(provider: String)

    public var category: FailureCategory {
        switch self {
        case .noEndpoint, .deviceNotRegistered: return .configuration
        case .notPublic: return .rejected
        case .notRegistered: return .notFound
        }
    }

    public var description: String {
        switch self {
        case .noEndpoint(let provider):
            return
                "\(provider): the server advertises no registration_endpoint, so Latchkey cannot register itself there; register a native client by hand, set client_id in the provider file and remove registration = \"dynamic\""
        case .notPublic(let provider, let problem, let leftBehind):
            var text =
                "\(provider): the server cannot register Latchkey as a public client: \(problem). Nothing was kept; register a native public client by hand and set client_id in the provider file"
            if !leftBehind.isEmpty {
                text += " (the server offered no way to delete client \(leftBehind.joined(separator: ", ")); its administrator can)"
            }
            return text
        case .deviceNotRegistered(let provider):
            return
                "\(provider): the client Latchkey registered for itself there (registration = \"dynamic\") cannot sign in with a device code: the server offers no device authorization endpoint or would not register the device grant; sign in without --device"
        case .notRegistered(let provider):
            return "\(provider): no registered client is in the vault for this provider; run `latchkey login \(provider)` to register one"
        }
    }
}
