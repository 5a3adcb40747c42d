import LatchkeyAccounts
public import LatchkeyBrokerWire
public import LatchkeyVault

extension TokenRelease {
    /// The access token the request asked for; a release without one (an agent that does not
    /// follow this version's protocol) is refused as a broken answer.
    public func requiredAccessToken() throws -> Secret {
        guard let accessToken else { throw BrokerRefusal(message: "the broker's answer held no access token", category: .rejected) }
        return accessToken
    }

    /// The ID token the request asked for; none when the account has none (plain OAuth 2.0).
    public func requiredIDToken() throws -> Secret {
        guard let idToken else { throw SignInError.noIDToken(account: account) }
        return idToken
    }
}
