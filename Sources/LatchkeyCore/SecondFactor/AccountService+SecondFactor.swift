import Foundation

/// Sign-in, refresh and phone enrollment for `kind = "firebase"` providers.
extension AccountService {
    /// The backend `provider`'s `mfa_backend` names.
    public func secondFactorBackend(for provider: Provider) throws(SecondFactorError) -> any SecondFactorBackend {
        guard let settings = provider.firebase else {
            throw .plugin(path: provider.sourceFile, reason: "\(provider.name) is not a kind = \"firebase\" provider")
        }
        switch settings.mfaBackend {
        case .firebase: return FirebaseBackend(settings: settings, transport: engine.transport)
        case .exec(let path): return ExecBackend(path: path, provider: provider.name)
        }
    }

    /// Signs in with the first factor and, when the account has one, a second factor; stores the
    /// account (with `secondFactor` set) only after its ID token verified.
    public func signInWithSecondFactor(
        provider: Provider, interaction: any SecondFactorInteraction
    ) async throws -> (AccountRecord, SignInOutcome) {
        let backend = try secondFactorBackend(for: provider)
        let firstFactor = try await interaction.firstFactor(for: provider)
        let (tokens, factor) = try await SecondFactorSignIn(backend: backend, interaction: interaction).run(firstFactor)
        let record = try await secondFactorAccount(from: tokens, provider: provider, factorUsed: factor?.kind.rawValue, previous: nil)
        return (record, try await store(record))
    }

    /// The first factor of a firebase provider with `first_factor = "provider:NAME"`: a whole
    /// sign-in at the OpenID provider `other` (stored like any other sign-in), whose verified ID
    /// token goes on to `accounts:signInWithIdp` as `providerId` `other.firebaseProviderID`.
    public func federatedFirstFactor(
        at other: Provider, mode: Provider.RedirectMode, interaction: any SignInInteraction, browser: BrowserLauncher,
        timeout: Duration = .seconds(300)
    ) async throws -> FirstFactor {
        let (record, _) = try await signIn(provider: other, mode: mode, interaction: interaction, browser: browser, timeout: timeout)
        guard let idToken = record.idToken else { throw SignInError.noIDToken(account: record.label) }
        return .federated(providerID: other.firebaseProviderID, idToken: idToken)
    }

    /// Refreshes a firebase account through securetoken (or its exec plugin): what
    /// `refreshUnderLock` calls instead of `engine.refresh` when `provider.isFirebase`.
    public func refreshSecondFactorAccount(_ record: AccountRecord, provider: Provider) async throws -> AccountRecord {
        guard let refreshToken = record.refreshToken else { throw RefreshError.noRefreshToken(account: record.label) }
        let tokens = try await secondFactorBackend(for: provider).refresh(refreshToken)
        return try await secondFactorAccount(from: tokens, provider: provider, factorUsed: nil, previous: record)
    }

    /// Enrolls a new phone for the signed-in account `selector`: sends a code to `phoneNumber`,
    /// asks `code` for it, and replaces the stored tokens with the enrolled ones.
    public func enrollPhone(
        _ selector: AccountSelector, phoneNumber: String, displayName: String?,
        code: @Sendable (_ maskedNumber: String) async -> Secret?
    ) async throws -> AccountRecord {
        let provider = try catalog.provider(named: selector.provider)
        let backend = try secondFactorBackend(for: provider)
        let current = try selector.select(from: try await keystore.records())
        guard let idToken = current.idToken else { throw SignInError.noIDToken(account: current.label) }
        let sessionInfo = try await backend.startPhoneEnrollment(phoneNumber: phoneNumber, idToken: idToken)
        guard let answer = await code(PhoneNumberMask.maskedIfFull(phoneNumber)) else { throw SecondFactorError.cancelled }
        let tokens = try await backend.finalizePhoneEnrollment(
            sessionInfo: sessionInfo, code: answer, displayName: displayName, idToken: idToken)
        let record = try await secondFactorAccount(from: tokens, provider: provider, factorUsed: "phone", previous: current)
        _ = try await store(record)
        return record
    }

    // MARK: - Account records

    /// The record for `tokens`: identity from the verified Firebase ID token (RS256 against the
    /// configured JWKS, `iss` = securetoken issuer, `aud` = project, `exp`), or as an exec plugin
    /// reported it. On a refresh (`previous`) the identity must not change.
    func secondFactorAccount(
        from tokens: SignInTokens, provider: Provider, factorUsed: String?, previous: AccountRecord?
    ) async throws -> AccountRecord {
        guard let settings = provider.firebase else { throw SignInError.noIDToken(account: provider.name) }
        let time = engine.now()
        var issuer: String
        var subject: String
        var displayName: String?
        var secondFactor: String?
        var expiresAt: Date?
        switch settings.mfaBackend {
        case .firebase:
            let metadata = ServerMetadata(
                issuer: settings.issuer, authorizationEndpoint: settings.identityToolkitURL, tokenEndpoint: settings.tokenEndpoint,
                jwksURI: settings.jwksURL)
            let claims: IDTokenClaims
            do {
                claims = try await engine.verify(tokens.idToken, provider: provider, metadata: metadata, nonce: nil)
            } catch let error as IDTokenError {
                throw SecondFactorError.idTokenRejected(error)
            }
            issuer = claims.issuer
            subject = claims.subject
            displayName = claims.email ?? claims.name
            secondFactor = FirebaseClaims.secondFactor(in: tokens.idToken)
            expiresAt = claims.expiresAt
        case .exec:
            guard
                let account = tokens.reportedAccount
                    ?? previous.map({
                        ReportedAccount(issuer: $0.issuer, subject: $0.subject, displayName: $0.displayName, secondFactor: $0.secondFactor)
                    })
            else {
                throw SecondFactorError.plugin(path: provider.sourceFile, reason: "the tokens answer has no \"account\"")
            }
            issuer = account.issuer
            subject = account.subject
            displayName = account.displayName
            secondFactor = account.secondFactor
        }
        if let expiresIn = tokens.expiresIn { expiresAt = time.addingTimeInterval(TimeInterval(expiresIn)) }
        if let previous {
            guard previous.issuer == issuer, previous.subject == subject else { throw RefreshError.identityChanged }
            var updated = previous
            updated.idToken = tokens.idToken
            updated.accessToken = tokens.idToken
            updated.refreshToken = tokens.refreshToken ?? previous.refreshToken
            updated.expiresAt = expiresAt
            updated.secondFactor = secondFactor ?? factorUsed ?? previous.secondFactor
            if let displayName { updated.displayName = displayName }
            updated.updatedAt = time
            updated.lastError = nil
            return updated
        }
        return AccountRecord(
            provider: provider.name, issuer: issuer, subject: subject, displayName: displayName, accessToken: tokens.idToken,
            tokenType: "Bearer", refreshToken: tokens.refreshToken, idToken: tokens.idToken, expiresAt: expiresAt, scopes: [],
            secondFactor: secondFactor ?? factorUsed, createdAt: time, updatedAt: time)
    }
}

/// Firebase-specific claims of an ID token whose signature was already verified.
enum FirebaseClaims {
    /// `firebase.sign_in_second_factor` (`phone`, `totp`), recorded on the account.
    static func secondFactor(in idToken: Secret) -> String? {
        let parts = idToken.exposedValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let firebase = claims["firebase"] as? [String: Any]
        else { return nil }
        return firebase["sign_in_second_factor"] as? String
    }
}
