import Foundation
public import LatchkeyVault

/// Refresh and phone enrollment for `kind = "firebase"` providers (their sign-in is `SignInFlow`'s).
extension AccountService {
    /// The backend the provider's `mfa_backend` names.
    func secondFactorBackend(for provider: FirebaseProvider) -> any SecondFactorBackend {
        switch provider.settings.mfaBackend {
        case .firebase: return FirebaseBackend(settings: provider.settings, transport: engine.transport)
        case .exec(let path): return ExecBackend(path: path, provider: provider.name)
        }
    }

    /// Refreshes a firebase account through securetoken (or its exec plugin).
    func refreshFirebaseAccount(_ record: AccountRecord, provider: FirebaseProvider) async throws -> AccountRecord {
        guard let refreshToken = record.refreshToken else { throw RefreshError.noRefreshToken(account: record.label) }
        let tokens = try await secondFactorBackend(for: provider).refresh(refreshToken)
        return try await firebaseAccount(from: tokens, provider: provider, factorUsed: nil, previous: record)
    }

    /// Enrolls a new phone for the signed-in account `selector`: sends a code to `phoneNumber`,
    /// asks for it through `interaction` (a wrong code may be typed again, `resend` sends a new
    /// one), and replaces the stored tokens with the enrolled ones.
    public func enrollPhone(
        _ selector: AccountSelector, phoneNumber: String, displayName: String?, interaction: any SignInInteraction
    ) async throws -> AccountRecord {
        let provider = try catalog.provider(named: selector.provider)
        guard let firebase = provider.firebase else { throw SecondFactorError.notEnrollable(provider: provider.name) }
        let backend = secondFactorBackend(for: firebase)
        let current = try selector.select(from: try await keystore.records())
        guard let idToken = current.idToken else { throw SignInError.noIDToken(account: current.label) }
        let hint = SecondFactorHint(
            id: "", kind: .phone, displayName: displayName, phoneNumber: PhoneNumberMask.maskedIfFull(phoneNumber))
        while true {
            let sessionInfo = try await backend.startPhoneEnrollment(phoneNumber: phoneNumber, idToken: idToken)
            let session = VerificationSession(sessionInfo: sessionInfo, hint: hint)
            await interaction.verificationStarted(session, notice: nil)
            var problem: SecondFactorError?
            codeEntry: while true {
                switch await interaction.enterCode(for: session, problem: problem) {
                case .cancel: throw SecondFactorError.cancelled
                case .resend: break codeEntry
                case .code(let code):
                    do {
                        let tokens = try await backend.finalizePhoneEnrollment(
                            sessionInfo: sessionInfo, code: code, displayName: displayName, idToken: idToken)
                        let record = try await firebaseAccount(from: tokens, provider: firebase, factorUsed: "phone", previous: current)
                        _ = try await store(record)
                        return record
                    } catch let error as SecondFactorError where error.recovery == .retryCode {
                        problem = error
                    }
                }
            }
        }
    }

    // MARK: - Account records

    /// The record for `tokens`: identity from the verified Firebase ID token (RS256 against the
    /// configured JWKS, `iss` = securetoken issuer, `aud` = project, `exp`), or as an exec plugin
    /// reported it. On a refresh or enrollment (`previous`) the identity must not change.
    func firebaseAccount(
        from tokens: SignInTokens, provider: FirebaseProvider, factorUsed: String?, previous: AccountRecord?
    ) async throws -> AccountRecord {
        let time = engine.now()
        let account: ReportedAccount
        var expiresAt: Date?
        switch provider.settings.mfaBackend {
        case .firebase:
            let claims: IDTokenClaims
            do {
                claims = try await engine.verify(tokens.idToken, expecting: provider.settings.idTokenExpectation)
            } catch let error as IDTokenError {
                throw SecondFactorError.idTokenRejected(error)
            }
            account = ReportedAccount(
                issuer: claims.issuer, subject: claims.subject, displayName: claims.email ?? claims.name,
                secondFactor: claims.firebaseSecondFactor)
            expiresAt = claims.expiresAt
        case .exec:
            guard
                let reported = tokens.reportedAccount
                    ?? previous.map({
                        ReportedAccount(issuer: $0.issuer, subject: $0.subject, displayName: $0.displayName, secondFactor: $0.secondFactor)
                    })
            else {
                throw SecondFactorError.plugin(path: provider.sourceFile, reason: "the tokens answer has no \"account\"")
            }
            account = reported
        }
        if let expiresIn = tokens.expiresIn { expiresAt = time.addingTimeInterval(TimeInterval(expiresIn)) }
        let update = TokenUpdate(
            accessToken: tokens.idToken, tokenType: "Bearer", refreshToken: tokens.refreshToken, idToken: tokens.idToken,
            expiresAt: expiresAt, displayName: account.displayName, secondFactor: account.secondFactor ?? factorUsed)
        if let previous {
            guard previous.issuer == account.issuer, previous.subject == account.subject else { throw RefreshError.identityChanged }
            return previous.applying(update, at: time)
        }
        let record = AccountRecord(
            provider: provider.name, issuer: account.issuer, subject: account.subject, displayName: nil, accessToken: tokens.idToken,
            tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [], createdAt: time, updatedAt: time)
        return record.applying(update, at: time)
    }
}
