import Foundation
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySecondFactor
import LatchkeySupport
import LatchkeyVault

/// The parts of `kind = "firebase"` accounts that are not the sign-in's steps: which backend
/// serves the provider, refresh, and the account record built from its tokens.
extension AccountService {
    /// The backend the provider's `mfa_backend` names.
    func firebaseBackend(for provider: FirebaseProvider) -> any FirebaseAuthBackend {
        switch provider.settings.mfaBackend {
        case .firebase: return FirebaseBackend(settings: provider.settings, transport: engine.transport)
        case .exec(let path): return ExecBackend(path: path, provider: provider.name)
        }
    }

    /// Refreshes a firebase account through securetoken (or its exec plugin).
    func refreshFirebaseAccount(_ record: AccountRecord, provider: FirebaseProvider) async throws -> AccountRecord {
        guard let refreshToken = record.refreshToken else {
            throw RefreshError.noRefreshToken(account: record.label, provider: record.provider)
        }
        let tokens = try await firebaseBackend(for: provider).refresh(refreshToken)
        return try await firebaseAccount(from: tokens, provider: provider, factorUsed: nil, previous: record)
    }

    /// Enrolls a new phone for `account`: `SignInFlow` sends a code to it, asks for the code
    /// through `interaction` (a wrong code may be typed again, `resend` sends a new one, an
    /// expired one is re-sent a bounded number of times) and stores the enrolled tokens.
    func enrollPhone(
        _ enrollment: (phoneNumber: String, displayName: String?), on account: AccountRecord, at provider: FirebaseProvider,
        interaction: any SignInInteraction
    ) async throws -> AccountRecord {
        guard let idToken = account.idToken else { throw SignInError.noIDToken(account: account.label) }
        let flow = SignInFlow(
            enrolling: PhoneEnrollment(phoneNumber: enrollment.phoneNumber, displayName: enrollment.displayName, idToken: idToken),
            on: account, at: provider)
        return try await SignInRunner(service: self, interaction: interaction, timeout: .seconds(300)).run(flow).0
    }

    // MARK: - Account records

    /// The record for `tokens`: identity from the verified Firebase ID token (RS256 against the
    /// configured JWKS, `iss` = securetoken issuer, `aud` = project, `exp`), or as an exec plugin
    /// reported it. On a refresh or enrollment (`previous`) `applying` refuses another identity.
    func firebaseAccount(
        from tokens: SignInTokens, provider: FirebaseProvider, factorUsed: String?, previous: AccountRecord?
    ) async throws -> AccountRecord {
        for (member, token) in [("the ID token", Optional(tokens.idToken)), ("the refresh token", tokens.refreshToken)] {
            if let problem = TokenText.problem(token?.exposedValue, member: member) {
                throw FirebaseAuthError.malformedResponse(backend: provider.name, reason: problem)
            }
        }
        let time = engine.now()
        let account: ReportedAccount
        var expiresAt: Date?
        switch provider.settings.mfaBackend {
        case .firebase:
            let claims: IDTokenClaims
            do {
                claims = try await engine.verify(tokens.idToken, expecting: provider.settings.idTokenExpectation)
            } catch let error as IDTokenError {
                throw FirebaseAuthError.idTokenRejected(error)
            }
            account = ReportedAccount(
                issuer: claims.issuer, subject: claims.subject, displayName: claims.displayName, secondFactor: claims.firebaseSecondFactor)
            expiresAt = claims.expiresAt
        case .exec:
            guard
                let reported = tokens.reportedAccount
                    ?? previous.map({
                        ReportedAccount(issuer: $0.issuer, subject: $0.subject, displayName: $0.displayName, secondFactor: $0.secondFactor)
                    })
            else {
                throw FirebaseAuthError.plugin(path: provider.sourceFile, reason: "the tokens answer has no \"account\"")
            }
            account = reported
        }
        if let expiresIn = tokens.expiresIn { expiresAt = time.addingTimeInterval(TimeInterval(expiresIn)) }
        let update = TokenUpdate(
            accessToken: tokens.idToken, tokenType: "Bearer", refreshToken: tokens.refreshToken, idToken: tokens.idToken,
            expiresAt: expiresAt, displayName: account.displayName, secondFactor: account.secondFactor ?? factorUsed,
            identity: TokenSubject(issuer: account.issuer, subject: account.subject))
        let stored =
            previous
            ?? AccountRecord(
                provider: provider.name, issuer: account.issuer, subject: account.subject, displayName: nil, accessToken: tokens.idToken,
                tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [], createdAt: time, updatedAt: time)
        return try stored.applying(update, at: time)
    }
}
