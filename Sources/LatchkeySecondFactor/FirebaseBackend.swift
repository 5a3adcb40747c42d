import Foundation
public import LatchkeyProviders
public import LatchkeySupport
public import LatchkeyVault

/// The Firebase Authentication / Identity Platform REST backend (docs/firebase-mfa-protocol.md §0, §1).
///
/// v1 for first-factor calls and lookup, v2 for MFA, securetoken for refresh; the API key goes
/// in the `key` query parameter; bodies are camelCase JSON except the refresh, which is a form.
public struct FirebaseBackend: FirebaseAuthBackend {
    public let settings: FirebaseSettings
    package let transport: any HTTPTransport

    public init(settings: FirebaseSettings, transport: any HTTPTransport) {
        self.settings = settings
        self.transport = transport
    }

    // MARK: - First factor

    public func signIn(_ firstFactor: FirstFactor) async throws(FirebaseAuthError) -> FirstFactorOutcome {
        let response: FirebaseWire.SignInResponse
        switch firstFactor {
        case .password(let email, let password):
            // §1.1: returnSecureToken "should always be true".
            response = try await identityToolkit(
                "v1/accounts:signInWithPassword",
                FirebaseWire.SignInWithPasswordRequest(email: email, password: password.exposedValue))
        case .federated(let providerID, let idToken):
            // §1.2: a manual credential; requestUri only has to be a valid URL.
            response = try await identityToolkit(
                "v1/accounts:signInWithIdp",
                FirebaseWire.SignInWithIdpRequest(
                    postBody: FormEncoding.encode([("id_token", idToken.exposedValue), ("providerId", providerID)])))
            if let message = response.errorMessage {
                throw FirebaseErrorEnvelope(message: message).secondFactorError
            }
            if response.needConfirmation == true {
                throw .server(
                    backend: "Firebase", code: "NEED_CONFIRMATION",
                    message: "this email already belongs to an account that signs in another way; sign in that way first")
            }
        }
        if let idToken = response.idToken {
            return .signedIn(
                SignInTokens(
                    idToken: Secret(idToken), refreshToken: response.refreshToken.map(Secret.init),
                    expiresIn: response.expiresIn.flatMap(WireLifetime.init(text:))?.seconds))
        }
        guard let pending = response.mfaPendingCredential, let enrollments = response.mfaInfo else {
            throw .malformedResponse(backend: "Firebase", reason: "neither idToken nor mfaPendingCredential with mfaInfo")
        }
        let hints = enrollments.compactMap(\.hint)
        guard !hints.isEmpty else {
            throw .server(
                backend: "Firebase", code: "UNSUPPORTED_SECOND_FACTOR",
                message: "the account's second factors are neither phone nor TOTP")
        }
        return .secondFactorRequired(hints: hints, pending: PendingCredential(Secret(pending)))
    }

    // MARK: - Second factor

    public func startSignIn(hint: SecondFactorHint, pending: PendingCredential) async throws(FirebaseAuthError) -> VerificationSession {
        // TOTP: nothing to send; the code comes from the person's authenticator app.
        guard hint.kind == .phone else { return VerificationSession(sessionInfo: nil, hint: hint) }
        // §1.3: no app-verification fields; projects that enforce reCAPTCHA answer with an error
        // that `appVerificationRequired` shows as is.
        let response: FirebaseWire.StartSignInResponse = try await identityToolkit(
            "v2/accounts/mfaSignIn:start",
            FirebaseWire.StartMfaSignInRequest(
                mfaPendingCredential: pending.value.exposedValue, mfaEnrollmentId: hint.id,
                phoneSignInInfo: FirebaseWire.StartMfaPhoneRequestInfo(phoneNumber: hint.phoneNumber)))
        guard let info = response.phoneResponseInfo else {
            throw .malformedResponse(backend: "Firebase", reason: "mfaSignIn:start returned no phoneResponseInfo.sessionInfo")
        }
        return VerificationSession(sessionInfo: Secret(info.sessionInfo), hint: hint)
    }

    public func finalizeSignIn(session: VerificationSession, code: Secret, pending: PendingCredential) async throws(FirebaseAuthError)
        -> SignInTokens
    {
        var body = FirebaseWire.FinalizeMfaSignInRequest(mfaPendingCredential: pending.value.exposedValue)
        if let sessionInfo = session.sessionInfo {
            body.phoneVerificationInfo = FirebaseWire.PhoneVerificationInfo(sessionInfo: sessionInfo.exposedValue, code: code.exposedValue)
        } else {
            // §1.4: TOTP sends the enrollment ID with totpVerificationInfo.
            body.mfaEnrollmentId = session.hint.id
            body.totpVerificationInfo = FirebaseWire.TotpVerificationInfo(verificationCode: code.exposedValue)
        }
        let response: FirebaseWire.FinalizeResponse = try await identityToolkit("v2/accounts/mfaSignIn:finalize", body)
        return SignInTokens(idToken: Secret(response.idToken), refreshToken: response.refreshToken.map(Secret.init), expiresIn: nil)
    }

    // MARK: - Enrollment

    public func startPhoneEnrollment(phoneNumber: String, idToken: Secret) async throws(FirebaseAuthError) -> Secret {
        let response: FirebaseWire.StartEnrollmentResponse = try await identityToolkit(
            "v2/accounts/mfaEnrollment:start",
            FirebaseWire.StartMfaEnrollmentRequest(
                idToken: idToken.exposedValue, phoneEnrollmentInfo: FirebaseWire.StartMfaPhoneRequestInfo(phoneNumber: phoneNumber)))
        guard let info = response.phoneSessionInfo else {
            throw .malformedResponse(backend: "Firebase", reason: "mfaEnrollment:start returned no phoneSessionInfo.sessionInfo")
        }
        return Secret(info.sessionInfo)
    }

    public func finalizePhoneEnrollment(sessionInfo: Secret, code: Secret, displayName: String?, idToken: Secret)
        async throws(FirebaseAuthError) -> SignInTokens
    {
        let body = FirebaseWire.FinalizeMfaEnrollmentRequest(
            idToken: idToken.exposedValue,
            phoneVerificationInfo: FirebaseWire.PhoneVerificationInfo(sessionInfo: sessionInfo.exposedValue, code: code.exposedValue),
            displayName: displayName)
        let response: FirebaseWire.FinalizeResponse = try await identityToolkit("v2/accounts/mfaEnrollment:finalize", body)
        return SignInTokens(idToken: Secret(response.idToken), refreshToken: response.refreshToken.map(Secret.init), expiresIn: nil)
    }

    /// The account's enrolled factors (`accounts:lookup`); full numbers are masked on the way in.
    public func enrolledFactors(idToken: Secret) async throws(FirebaseAuthError) -> [SecondFactorHint] {
        let response: FirebaseWire.LookupResponse = try await identityToolkit(
            "v1/accounts:lookup", FirebaseWire.LookupRequest(idToken: idToken.exposedValue))
        guard let user = response.users?.first else { throw .sessionEnded(code: "USER_NOT_FOUND") }
        return (user.mfaInfo ?? []).compactMap(\.hint)
    }

    // MARK: - Refresh

    /// §1.8: a form body, a snake_case answer.
    public func refresh(_ refreshToken: Secret) async throws(FirebaseAuthError) -> SignInTokens {
        let request = HTTPRequest.form(
            withKey(settings.tokenEndpoint), [("grant_type", "refresh_token"), ("refresh_token", refreshToken.exposedValue)])
        let response: FirebaseWire.GrantTokenResponse = try await send(request, operation: "securetoken v1/token")
        return SignInTokens(
            idToken: Secret(response.idToken), refreshToken: response.refreshToken.map(Secret.init),
            expiresIn: response.expiresIn.flatMap(WireLifetime.init(text:))?.seconds)
    }

    // MARK: - Transport

    private func identityToolkit<Request: Encodable, Response: Decodable>(_ path: String, _ body: Request) async throws(FirebaseAuthError)
        -> Response
    {
        let url = withKey(FirebaseSettings.url(settings.identityToolkitURL, path))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json: Data
        do {
            json = try encoder.encode(body)
        } catch {
            throw .malformedResponse(backend: "Firebase", reason: "the request for \(path) could not be encoded")
        }
        let request = HTTPRequest(
            method: .post, url: url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
            body: Array(json))
        return try await send(request, operation: path)
    }

    private func send<Response: Decodable>(_ request: HTTPRequest, operation: String) async throws(FirebaseAuthError) -> Response {
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw .transport(error)
        }
        guard response.status == 200 else {
            if let envelope = FirebaseErrorEnvelope(body: response.body) { throw envelope.secondFactorError }
            throw .malformedResponse(backend: "Firebase", reason: "HTTP \(response.status) from \(operation) without an error envelope")
        }
        do {
            return try JSONDecoder().decode(Response.self, from: Data(response.body))
        } catch {
            throw .malformedResponse(backend: "Firebase", reason: "\(operation) answered with fields missing or of the wrong type")
        }
    }

    /// `url?key=API_KEY` (§0: the `key` query parameter).
    private func withKey(_ url: URL) -> URL {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "key=" + FormEncoding.escape(settings.apiKey)
        return components.url!
    }
}
