public import LatchkeyVault

/// How the person proves who they are before the second factor.
public enum FirstFactor: Sendable, Equatable {
    /// Email and password (`accounts:signInWithPassword`).
    case password(email: String, password: Secret)
    /// An ID token from another OpenID provider (`accounts:signInWithIdp`); `providerID` is the
    /// Firebase provider ID such as `google.com` or `oidc.example`.
    case federated(providerID: String, idToken: Secret)
}

/// What the first factor led to.
public enum FirstFactorOutcome: Sendable, Equatable {
    /// No second factor is enrolled: signed in.
    case signedIn(SignInTokens)
    /// The account has second factors: pick one of `hints` and prove it.
    case secondFactorRequired(hints: [SecondFactorHint], pending: PendingCredential)
}

/// Proof that the first factor passed (`mfaPendingCredential`): opaque, short-lived, secret.
public struct PendingCredential: Sendable, Equatable {
    public var value: Secret
    public init(_ value: Secret) { self.value = value }
}

/// A code was sent (or, for TOTP, is expected): what finalize needs besides the code.
public struct VerificationSession: Sendable, Equatable {
    /// `phoneResponseInfo.sessionInfo` for phone factors; `nil` for TOTP (nothing is sent).
    public var sessionInfo: Secret?
    /// The factor this session proves.
    public var hint: SecondFactorHint

    public init(sessionInfo: Secret?, hint: SecondFactorHint) {
        self.sessionInfo = sessionInfo
        self.hint = hint
    }
}

/// Tokens from a completed sign-in, enrollment or refresh.
public struct SignInTokens: Sendable, Equatable {
    /// `idToken` / `id_token`: for Firebase this is also the bearer token for its APIs.
    public var idToken: Secret
    /// `refreshToken` / `refresh_token`.
    public var refreshToken: Secret?
    /// `expiresIn` / `expires_in` in seconds; absent after MFA finalize (take the JWT's `exp`).
    public var expiresIn: Int?
    /// Identity reported by a backend that does not issue verifiable ID tokens (exec plugins).
    public var reportedAccount: ReportedAccount?

    public init(idToken: Secret, refreshToken: Secret?, expiresIn: Int?, reportedAccount: ReportedAccount? = nil) {
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.reportedAccount = reportedAccount
    }
}

/// Who signed in, as an exec plugin states it (see latchkey-mfa-plugin(7)).
public struct ReportedAccount: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var displayName: String?
    /// The second factor used (`phone`, `totp`), when there was one.
    public var secondFactor: String?

    public init(issuer: String, subject: String, displayName: String?, secondFactor: String?) {
        self.issuer = issuer
        self.subject = subject
        self.displayName = displayName
        self.secondFactor = secondFactor
    }
}

/// The person's answer when asked for a code.
public enum CodeAnswer: Sendable, Equatable {
    case code(Secret)
    case resend
    case cancel
}
