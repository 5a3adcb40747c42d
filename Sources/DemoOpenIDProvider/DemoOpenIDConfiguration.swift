public import Foundation

/// Who can sign in to the demo OpenID provider and how long what it issues lives.
public struct DemoOpenIDConfiguration: Sendable {
    /// The one person of the demo: `preferred_username`, the password typed on the login page,
    /// and the claims of the ID token and userinfo.
    public struct User: Sendable {
        public var subject: String
        public var username: String
        public var password: String
        public var name: String
        public var email: String

        public init(subject: String, username: String, password: String, name: String, email: String) {
            self.subject = subject
            self.username = username
            self.password = password
            self.name = name
            self.email = email
        }
    }

    /// The public client Latchkey signs in as (no secret: RFC 8252 §8.4).
    public var clientID: String
    /// Paths a loopback redirect URI may have (any port, RFC 8252 §7.3), exactly.
    public var redirectPaths: Set<String>
    public var user: User
    /// `expires_in` of access tokens: short, so the screen's countdown and refresh are seen.
    public var accessTokenLifetime: TimeInterval
    /// How long an authorization code may wait for its exchange.
    public var codeLifetime: TimeInterval
    /// `expires_in` and `interval` of a device authorization (RFC 8628 §3.2).
    public var deviceCodeLifetime: TimeInterval
    public var deviceInterval: Int

    public init(
        clientID: String = "latchkey-demo", redirectPaths: Set<String>,
        user: User = User(subject: "ada-1815", username: "ada", password: "lovelace-demo", name: "Ada Lovelace", email: "ada@demo.test"),
        accessTokenLifetime: TimeInterval = 600, codeLifetime: TimeInterval = 60, deviceCodeLifetime: TimeInterval = 600,
        deviceInterval: Int = 2
    ) {
        self.clientID = clientID
        self.redirectPaths = redirectPaths
        self.user = user
        self.accessTokenLifetime = accessTokenLifetime
        self.codeLifetime = codeLifetime
        self.deviceCodeLifetime = deviceCodeLifetime
        self.deviceInterval = deviceInterval
    }
}
