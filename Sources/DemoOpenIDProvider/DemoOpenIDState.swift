import Foundation
public import IdentityToolkitEmulator
import LatchkeyCrypto
import Synchronization

/// The demo provider's grants and tokens behind one lock, and its routing.
public final class DemoOpenIDState: Sendable {
    /// An authorization request waiting for the person to sign in on the login page.
    struct PendingRequest {
        var redirectURI: String
        var state: String?
        var nonce: String?
        var codeChallenge: String
        var scope: String
        var createdAt: Date
    }

    /// A code issued at the redirect, for one exchange.
    struct IssuedCode {
        var redirectURI: String
        var codeChallenge: String
        var nonce: String?
        var scope: String
        var issuedAt: Date
    }

    /// RFC 8628 §3.2: a device authorization and what the person did with it.
    struct DeviceGrant {
        var userCode: String
        var scope: String
        var expiresAt: Date
        var approved = false
        var denied = false
        var lastPoll: Date?
    }

    /// A refresh token family: the current token, and whether it was revoked (a rotated-out
    /// token used again revokes the whole family, as OAuth 2.0 Security BCP §4.14.2 asks).
    struct RefreshGrant {
        var family: String
        var scope: String
    }

    struct Storage {
        var issuer = ""
        var pending: [String: PendingRequest] = [:]
        var codes: [String: IssuedCode] = [:]
        var devices: [String: DeviceGrant] = [:]
        var accessTokens: [String: (scope: String, family: String?, expiresAt: Date)] = [:]
        var refreshTokens: [String: RefreshGrant] = [:]
        var rotatedOut: [String: String] = [:]
        var revokedFamilies: Set<String> = []
    }

    let configuration: DemoOpenIDConfiguration
    let signer: TokenSigner
    let clock: @Sendable () -> Date
    let storage = Mutex(Storage())

    init(configuration: DemoOpenIDConfiguration, clock: @escaping @Sendable () -> Date) throws {
        self.configuration = configuration
        self.clock = clock
        signer = try TokenSigner()
    }

    public internal(set) var issuer: String {
        get { storage.withLock { $0.issuer } }
        set { storage.withLock { $0.issuer = newValue } }
    }

    /// Routes one request. Every failure is an answer (an OAuth error, an error page), never a throw.
    public func handle(_ request: EmulatorRequest) -> EmulatorResponse {
        storage.withLock { storage in
            let route = Route(request: request, configuration: configuration, signer: signer, now: clock())
            return route.answer(&storage)
        }
    }
}
