public import Foundation
import LatchkeyCrypto

/// The emulated project: users, pending codes, refresh tokens and the clock, behind one lock.
///
/// Faithful to docs/firebase-mfa-protocol.md field by field; where the Firebase emulator differs from
/// production (no expiry, no attempt limits, no quota, unsigned tokens) this one follows
/// production, with the limits as configuration knobs.
public final class IdentityToolkitState: @unchecked Sendable {
    struct VerificationRecord {
        enum Purpose { case signIn, enrollment }
        var code: String
        var phoneNumber: String
        var sessionInfo: String
        var localId: String
        var enrollmentId: String?
        var purpose: Purpose
        var createdAt: Date
        var wrongAttempts = 0
    }

    struct RefreshRecord {
        var localId: String
        var signInProvider: String
        var secondFactor: String?
        var secondFactorIdentifier: String?
    }

    private let lock = NSLock()
    private var configuration: EmulatorConfiguration
    private var users: [String: EmulatorUser]
    private var records: [String: VerificationRecord] = [:]
    private var refreshTokens: [String: RefreshRecord] = [:]
    private var smsSent: [Date] = []
    private var totpWrongAttempts: [String: Int] = [:]
    private var clockOffset: TimeInterval = 0
    private let baseClock: @Sendable () -> Date
    let signer: TokenSigner
    private let pendingKey = SymmetricKey(size: .bits256)
    /// Receives one line per code sent, as the Firebase emulator logs them.
    private let log: @Sendable (String) -> Void
    /// Whether `GET /emulator/v1/projects/{p}/verificationCodes` is served: by the stand-alone
    /// emulator, whose test harnesses read codes as they do from Firebase's; never by the demo,
    /// where any local process or web page could read the person's codes there.
    private let listsCodesOverHTTP: Bool

    public init(
        configuration: EmulatorConfiguration, clock: @escaping @Sendable () -> Date = { Date() },
        log: @escaping @Sendable (String) -> Void = { _ in }, listsCodesOverHTTP: Bool = false
    ) throws {
        self.listsCodesOverHTTP = listsCodesOverHTTP
        self.configuration = configuration
        self.users = Dictionary(configuration.users.map { ($0.localId, $0) }, uniquingKeysWith: { _, last in last })
        self.baseClock = clock
        self.signer = try TokenSigner()
        self.log = log
    }

    public var projectID: String { lock.withLock { configuration.projectID } }

    var now: Date { baseClock().addingTimeInterval(clockOffset) }

    /// Moves the emulator's clock forward (codes, pending credentials and tokens age).
    public func advanceClock(by seconds: TimeInterval) {
        lock.withLock { clockOffset += seconds }
    }

    /// Changes a knob while running (for tests: quota, app verification, attempt limits).
    public func reconfigure(_ change: (inout EmulatorConfiguration) -> Void) {
        lock.withLock {
            change(&configuration)
        }
    }

    /// The pending codes: what `GET /emulator/v1/projects/{p}/verificationCodes` lists.
    public func verificationCodes() -> [(code: String, phoneNumber: String, sessionInfo: String)] {
        lock.withLock { records.values.sorted { $0.createdAt < $1.createdAt }.map { ($0.code, $0.phoneNumber, $0.sessionInfo) } }
    }

    /// A user as stored now (enrollments included).
    public func user(_ localId: String) -> EmulatorUser? {
        lock.withLock { users[localId] }
    }

    // MARK: - Routing

    public func handle(_ request: EmulatorRequest) -> EmulatorResponse {
        lock.withLock {
            do {
                return try route(request)
            } catch let error as APIError {
                return error.response
            } catch {
                return APIError(status: 500, message: "INTERNAL", reason: "backendError", googleStatus: "INTERNAL").response
            }
        }
    }

    private func route(_ request: EmulatorRequest) throws -> EmulatorResponse {
        let path = request.path
        if request.method == "GET" {
            if path == "/" { return .json(["authEmulator": ["ready": true, "projectId": configuration.projectID]]) }
            if path == "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com" {
                return .json(try signer.keySet())
            }
            if listsCodesOverHTTP, path == "/emulator/v1/projects/\(configuration.projectID)/verificationCodes" {
                let codes = records.values.sorted { $0.createdAt < $1.createdAt }.map {
                    ["code": $0.code, "phoneNumber": $0.phoneNumber, "sessionInfo": $0.sessionInfo]
                }
                return .json(["verificationCodes": codes])
            }
            if path == "/identitytoolkit.googleapis.com/v2/recaptchaConfig" {
                throw APIError(
                    status: 501, message: "identitytoolkit.getRecaptchaConfig is not implemented in the Auth Emulator.",
                    reason: "unimplemented", googleStatus: "NOT_IMPLEMENTED")
            }
            throw APIError(status: 404, message: "Not Found", reason: "notFound", googleStatus: "NOT_FOUND")
        }
        guard request.method == "POST" else {
            throw APIError(status: 404, message: "Not Found", reason: "notFound", googleStatus: "NOT_FOUND")
        }
        try checkAPIKey(request)
        switch path {
        case "/securetoken.googleapis.com/v1/token":
            return try grantToken(request)
        case "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword":
            return try signInWithPassword(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v1/accounts:signInWithIdp":
            return try signInWithIdp(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v1/accounts:lookup":
            return try lookup(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start":
            return try mfaSignInStart(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize":
            return try mfaSignInFinalize(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start":
            return try mfaEnrollmentStart(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:finalize":
            return try mfaEnrollmentFinalize(try jsonBody(request))
        case "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:withdraw":
            return try mfaEnrollmentWithdraw(try jsonBody(request))
        default:
            throw APIError(status: 404, message: "Not Found", reason: "notFound", googleStatus: "NOT_FOUND")
        }
    }

    /// §0 and §4: `key` in the query or `x-goog-api-key`; missing → 403, wrong (when configured) → 400.
    private func checkAPIKey(_ request: EmulatorRequest) throws {
        guard let key = request.query["key"] ?? request.headers["x-goog-api-key"], !key.isEmpty else {
            throw APIError(
                status: 403, message: "The request is missing a valid API key.", reason: "forbidden", googleStatus: "PERMISSION_DENIED")
        }
        if let expected = configuration.apiKey, key != expected {
            throw APIError(
                status: 400, message: "API key not valid. Please pass a valid API key.", reason: "badRequest",
                googleStatus: "INVALID_ARGUMENT")
        }
    }

    private func jsonBody(_ request: EmulatorRequest) throws -> [String: Any] {
        if request.body.isEmpty { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            throw APIError.badRequest("INVALID_ARGUMENT", "((Invalid JSON payload received.))")
        }
        return object
    }

    // MARK: - First factor

    /// §1.1, checks in the Firebase emulator's order: credentials, disabled, password, MFA.
    private func signInWithPassword(_ body: [String: Any]) throws -> EmulatorResponse {
        guard let email = body["email"] as? String, !email.isEmpty else { throw APIError.badRequest("MISSING_EMAIL") }
        guard let password = body["password"] as? String, !password.isEmpty else { throw APIError.badRequest("MISSING_PASSWORD") }
        let protected = configuration.emailEnumerationProtection
        guard let user = users.values.first(where: { $0.email.lowercased() == email.lowercased() }) else {
            throw APIError.badRequest(protected ? "INVALID_LOGIN_CREDENTIALS" : "EMAIL_NOT_FOUND")
        }
        if user.disabled { throw APIError.badRequest("USER_DISABLED", "The user account has been disabled by an administrator.") }
        guard user.password == password else { throw APIError.badRequest(protected ? "INVALID_LOGIN_CREDENTIALS" : "INVALID_PASSWORD") }
        var response: [String: Any] = [
            "kind": "identitytoolkit#VerifyPasswordResponse", "localId": user.localId, "email": user.email,
            "displayName": user.displayName ?? "", "registered": true,
        ]
        response.merge(try tokensOrPending(user, signInProvider: "password"), uniquingKeysWith: { _, new in new })
        return .json(response)
    }

    /// §1.2 with a manual credential: `postBody` carries `id_token` (read, like the Firebase
    /// emulator, without checking its signature) and `providerId`.
    private func signInWithIdp(_ body: [String: Any]) throws -> EmulatorResponse {
        guard body["requestUri"] is String else { throw APIError.badRequest("MISSING_REQUEST_URI") }
        guard let postBody = body["postBody"] as? String else { throw APIError.badRequest("INVALID_IDP_RESPONSE", "((Missing postBody.))") }
        let form = Encoding.formDecode(postBody)
        guard let providerId = form["providerId"], !providerId.isEmpty else {
            throw APIError.badRequest("INVALID_IDP_RESPONSE", "((Missing providerId.))")
        }
        guard let idToken = form["id_token"], case let parts = idToken.split(separator: "."), parts.count >= 2,
            let payload = Encoding.base64URLDecode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any], let rawId = claims["sub"] as? String
        else { throw APIError.badRequest("INVALID_IDP_RESPONSE", "Unable to parse id_token.") }
        var isNewUser = false
        let user: EmulatorUser
        if let found = users.values.first(where: { $0.federatedIdentities.contains { $0.providerId == providerId && $0.rawId == rawId } }) {
            user = found
        } else {
            isNewUser = true
            user = EmulatorUser(
                localId: Encoding.randomToken(length: 28), email: claims["email"] as? String ?? "", password: nil,
                emailVerified: claims["email_verified"] as? Bool ?? false,
                federatedIdentities: [.init(providerId: providerId, rawId: rawId)])
            users[user.localId] = user
        }
        if user.disabled { throw APIError.badRequest("USER_DISABLED", "The user account has been disabled by an administrator.") }
        var response: [String: Any] = [
            "kind": "identitytoolkit#VerifyAssertionResponse", "federatedId": rawId, "providerId": providerId, "localId": user.localId,
            "email": user.email, "emailVerified": user.emailVerified, "displayName": user.displayName ?? "", "isNewUser": isNewUser,
            "oauthIdToken": idToken,
        ]
        response.merge(try tokensOrPending(user, signInProvider: providerId), uniquingKeysWith: { _, new in new })
        return .json(response)
    }

    /// Tokens, or (when the user has factors) `mfaPendingCredential` and the masked `mfaInfo`.
    private func tokensOrPending(_ user: EmulatorUser, signInProvider: String) throws -> [String: Any] {
        guard !user.mfaInfo.isEmpty else {
            return try issueTokens(user, signInProvider: signInProvider, secondFactor: nil, expiresIn: true)
        }
        return ["mfaPendingCredential": try pendingCredential(user, signInProvider: signInProvider), "mfaInfo": user.mfaInfo.map(hint)]
    }

    /// A hint as sent after the first factor: the number masked (§2), `totpInfo` present for TOTP.
    private func hint(_ factor: EmulatorUser.Factor) -> [String: Any] {
        var entry: [String: Any] = [
            "mfaEnrollmentId": factor.mfaEnrollmentId, "displayName": factor.displayName ?? "",
            "enrolledAt": factor.enrolledAt ?? "2024-05-01T12:34:56.789Z",
        ]
        if let phone = factor.phoneInfo { entry["phoneInfo"] = Self.mask(phone) }
        if factor.totpSecret != nil { entry["totpInfo"] = [String: Any]() }
        return entry
    }

    /// `+` followed by `*` for all digits but the last four (`obfuscatePhoneNumber`).
    static func mask(_ phone: String) -> String {
        let digits = phone.filter(\.isNumber)
        return "+" + String(repeating: "*", count: max(0, digits.count - 4)) + digits.suffix(4)
    }

    // MARK: - Pending credential

    /// Unlike the Firebase emulator's (plain base64 JSON that never expires), this one is signed
    /// and expires, so a tampered or stale credential gets INVALID_MFA_PENDING_CREDENTIAL.
    private func pendingCredential(_ user: EmulatorUser, signInProvider: String) throws -> String {
        let claims: [String: Any] = [
            "localId": user.localId, "signInProvider": signInProvider, "projectId": configuration.projectID,
            "expiresAt": now.addingTimeInterval(configuration.pendingCredentialLifetime).timeIntervalSince1970,
        ]
        let payload = Encoding.base64URL(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(payload.utf8), using: pendingKey)
        return payload + "." + Encoding.base64URL(Data(mac))
    }

    private func parsePending(_ body: [String: Any], missing: APIError) throws -> (EmulatorUser, String) {
        guard let credential = body["mfaPendingCredential"] as? String, !credential.isEmpty else { throw missing }
        let invalid = APIError.badRequest("INVALID_MFA_PENDING_CREDENTIAL")
        let parts = credential.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let mac = Encoding.base64URLDecode(parts[1]),
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(parts[0].utf8), using: pendingKey),
            let payload = Encoding.base64URLDecode(parts[0]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let localId = claims["localId"] as? String, let expiresAt = (claims["expiresAt"] as? NSNumber)?.doubleValue
        else { throw invalid }
        guard claims["projectId"] as? String == configuration.projectID else {
            throw APIError.badRequest("INVALID_PROJECT_ID", "Project ID does not match MFA pending credential.")
        }
        guard now.timeIntervalSince1970 < expiresAt, let user = users[localId] else { throw invalid }
        if user.disabled { throw APIError.badRequest("USER_DISABLED", "The user account has been disabled by an administrator.") }
        return (user, claims["signInProvider"] as? String ?? "password")
    }

    // MARK: - Codes

    /// §1.3 app verification, the SMS quota, then a new record with a 6-digit code.
    private func sendCode(
        to phoneNumber: String, localId: String, enrollmentId: String?, purpose: VerificationRecord.Purpose, info: [String: Any]?
    ) throws -> String {
        if configuration.requireAppVerification {
            let hasProof = ["recaptchaToken", "captchaResponse", "safetyNetToken", "playIntegrityToken", "iosReceipt"].contains {
                (info?[$0] as? String)?.isEmpty == false
            }
            if !hasProof { throw APIError.badRequest("INVALID_APP_CREDENTIAL") }
        }
        smsSent.removeAll { now.timeIntervalSince($0) >= configuration.smsQuotaWindow }
        guard smsSent.count < configuration.smsQuota else { throw APIError.badRequest("QUOTA_EXCEEDED", "Exceeded quota.") }
        smsSent.append(now)
        let sessionInfo = Encoding.randomToken(length: 226, extra: "-_")
        let code = Encoding.randomDigits()
        records[sessionInfo] = VerificationRecord(
            code: code, phoneNumber: phoneNumber, sessionInfo: sessionInfo, localId: localId, enrollmentId: enrollmentId,
            purpose: purpose, createdAt: now)
        let verb = purpose == .signIn ? "sign in with MFA" : "enroll MFA"
        log("To \(verb) using \(phoneNumber), use the code \(code).")
        return sessionInfo
    }

    /// Checks `phoneVerificationInfo`: unknown → INVALID_SESSION_INFO, expired → SESSION_EXPIRED,
    /// over the attempt limit → TOO_MANY_ATTEMPTS_TRY_LATER, wrong → INVALID_CODE (the record
    /// is kept for a retry), right → the record is consumed.
    private func consumeCode(_ info: [String: Any]?, localId: String, purpose: VerificationRecord.Purpose) throws -> VerificationRecord {
        guard let sessionInfo = info?["sessionInfo"] as? String, !sessionInfo.isEmpty else {
            throw APIError.badRequest("MISSING_SESSION_INFO")
        }
        guard let code = info?["code"] as? String, !code.isEmpty else { throw APIError.badRequest("MISSING_CODE") }
        guard var record = records[sessionInfo], record.purpose == purpose else { throw APIError.badRequest("INVALID_SESSION_INFO") }
        guard now.timeIntervalSince(record.createdAt) < configuration.codeLifetime else {
            records[sessionInfo] = nil
            throw APIError.badRequest("SESSION_EXPIRED")
        }
        guard record.wrongAttempts < configuration.maxCodeAttempts else {
            records[sessionInfo] = nil
            throw APIError.badRequest("TOO_MANY_ATTEMPTS_TRY_LATER")
        }
        guard record.code == code else {
            record.wrongAttempts += 1
            records[sessionInfo] = record
            throw APIError.badRequest("INVALID_CODE")
        }
        records[sessionInfo] = nil
        guard record.localId == localId else { throw APIError.badRequest("MFA_ENROLLMENT_NOT_FOUND") }
        return record
    }

    // MARK: - MFA sign-in

    /// §1.3
    private func mfaSignInStart(_ body: [String: Any]) throws -> EmulatorResponse {
        let (user, _) = try parsePending(
            body, missing: .badRequest("MISSING_MFA_PENDING_CREDENTIAL", "Request does not have MFA pending credential."))
        guard let enrollmentId = body["mfaEnrollmentId"] as? String, !enrollmentId.isEmpty else {
            throw APIError.badRequest("MISSING_MFA_ENROLLMENT_ID", "No second factor identifier is provided.")
        }
        guard let factor = user.mfaInfo.first(where: { $0.mfaEnrollmentId == enrollmentId }), let phone = factor.phoneInfo else {
            throw APIError.badRequest("MFA_ENROLLMENT_NOT_FOUND")
        }
        let sessionInfo = try sendCode(
            to: phone, localId: user.localId, enrollmentId: enrollmentId, purpose: .signIn, info: body["phoneSignInInfo"] as? [String: Any])
        return .json(["phoneResponseInfo": ["sessionInfo": sessionInfo]])
    }

    /// §1.4: phone (`phoneVerificationInfo`) or TOTP (`mfaEnrollmentId` + `totpVerificationInfo`).
    private func mfaSignInFinalize(_ body: [String: Any]) throws -> EmulatorResponse {
        let (user, signInProvider) = try parsePending(
            body, missing: .badRequest("MISSING_CREDENTIAL", "Please set MFA Pending Credential."))
        let factor: EmulatorUser.Factor
        if let totp = body["totpVerificationInfo"] as? [String: Any] {
            guard let enrollmentId = body["mfaEnrollmentId"] as? String,
                let found = user.mfaInfo.first(where: { $0.mfaEnrollmentId == enrollmentId }), let secret = found.totpSecret
            else { throw APIError.badRequest("MFA_ENROLLMENT_NOT_FOUND") }
            guard let code = totp["verificationCode"] as? String, !code.isEmpty else { throw APIError.badRequest("MISSING_CODE") }
            let attempts = totpWrongAttempts[enrollmentId, default: 0]
            guard attempts < configuration.maxCodeAttempts else { throw APIError.badRequest("TOO_MANY_ATTEMPTS_TRY_LATER") }
            guard TOTP.verify(code, secret: secret, at: now) else {
                totpWrongAttempts[enrollmentId] = attempts + 1
                throw APIError.badRequest("INVALID_CODE")
            }
            totpWrongAttempts[enrollmentId] = nil
            factor = found
            return .json(
                try issueTokens(user, signInProvider: signInProvider, secondFactor: ("totp", factor.mfaEnrollmentId), expiresIn: false))
        }
        let record = try consumeCode(body["phoneVerificationInfo"] as? [String: Any], localId: user.localId, purpose: .signIn)
        guard let found = user.mfaInfo.first(where: { $0.mfaEnrollmentId == record.enrollmentId }) else {
            throw APIError.badRequest("MFA_ENROLLMENT_NOT_FOUND")
        }
        factor = found
        return .json(
            try issueTokens(user, signInProvider: signInProvider, secondFactor: ("phone", factor.mfaEnrollmentId), expiresIn: false))
    }

    // MARK: - Enrollment

    private func userFromIDToken(_ body: [String: Any]) throws -> (EmulatorUser, [String: Any]) {
        guard let token = body["idToken"] as? String, !token.isEmpty else { throw APIError.badRequest("MISSING_ID_TOKEN") }
        guard let claims = signer.verifiedClaims(token), claims["aud"] as? String == configuration.projectID,
            let localId = claims["sub"] as? String
        else { throw APIError.badRequest("INVALID_ID_TOKEN") }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, now.timeIntervalSince1970 < exp else {
            throw APIError.badRequest("TOKEN_EXPIRED")
        }
        guard let user = users[localId] else { throw APIError.badRequest("USER_NOT_FOUND") }
        if user.disabled { throw APIError.badRequest("USER_DISABLED", "The user account has been disabled by an administrator.") }
        return (user, claims)
    }

    /// §1.5, with the Firebase emulator's preconditions and messages.
    private func mfaEnrollmentStart(_ body: [String: Any]) throws -> EmulatorResponse {
        let (user, _) = try userFromIDToken(body)
        guard user.emailVerified else {
            throw APIError.badRequest("UNVERIFIED_EMAIL", "Need to verify email first before enrolling second factors.")
        }
        guard let info = body["phoneEnrollmentInfo"] as? [String: Any] else {
            throw APIError.badRequest("INVALID_ARGUMENT", "((Missing phoneEnrollmentInfo.))")
        }
        guard let phone = info["phoneNumber"] as? String, Self.isE164(phone) else {
            throw APIError.badRequest("INVALID_PHONE_NUMBER", "Invalid format.")
        }
        guard !user.mfaInfo.contains(where: { $0.phoneInfo == phone }) else {
            throw APIError.badRequest("SECOND_FACTOR_EXISTS", "Phone number already enrolled as second factor for this account.")
        }
        guard user.mfaInfo.count < configuration.maxFactors else { throw APIError.badRequest("SECOND_FACTOR_LIMIT_EXCEEDED") }
        let sessionInfo = try sendCode(to: phone, localId: user.localId, enrollmentId: nil, purpose: .enrollment, info: info)
        return .json(["phoneSessionInfo": ["sessionInfo": sessionInfo]])
    }

    /// §1.6: the new factor is stored, and tokens carrying it are returned.
    private func mfaEnrollmentFinalize(_ body: [String: Any]) throws -> EmulatorResponse {
        var (user, claims) = try userFromIDToken(body)
        let record = try consumeCode(body["phoneVerificationInfo"] as? [String: Any], localId: user.localId, purpose: .enrollment)
        var factor = EmulatorUser.Factor(
            mfaEnrollmentId: Encoding.randomToken(length: 28), displayName: body["displayName"] as? String, phoneInfo: record.phoneNumber)
        factor.enrolledAt = ISO8601DateFormatter().string(from: now)
        user.mfaInfo.append(factor)
        users[user.localId] = user
        let provider = (claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String ?? "password"
        return .json(try issueTokens(user, signInProvider: provider, secondFactor: ("phone", factor.mfaEnrollmentId), expiresIn: false))
    }

    /// §1.7
    private func mfaEnrollmentWithdraw(_ body: [String: Any]) throws -> EmulatorResponse {
        var (user, claims) = try userFromIDToken(body)
        guard let id = body["mfaEnrollmentId"] as? String, user.mfaInfo.contains(where: { $0.mfaEnrollmentId == id }) else {
            throw APIError.badRequest("MFA_ENROLLMENT_NOT_FOUND")
        }
        user.mfaInfo.removeAll { $0.mfaEnrollmentId == id }
        users[user.localId] = user
        let provider = (claims["firebase"] as? [String: Any])?["sign_in_provider"] as? String ?? "password"
        return .json(try issueTokens(user, signInProvider: provider, secondFactor: nil, expiresIn: false))
    }

    /// §1.9: full numbers here (no masking for the account's own lookup).
    private func lookup(_ body: [String: Any]) throws -> EmulatorResponse {
        let (user, _) = try userFromIDToken(body)
        var entry: [String: Any] = [
            "localId": user.localId, "email": user.email, "emailVerified": user.emailVerified, "disabled": user.disabled,
            "displayName": user.displayName ?? "",
        ]
        if !user.mfaInfo.isEmpty {
            entry["mfaInfo"] = user.mfaInfo.map { factor -> [String: Any] in
                var item = hint(factor)
                if let phone = factor.phoneInfo { item["phoneInfo"] = phone }
                return item
            }
        }
        return .json(["kind": "identitytoolkit#GetAccountInfoResponse", "users": [entry]])
    }

    static func isE164(_ phone: String) -> Bool {
        guard phone.hasPrefix("+") else { return false }
        let digits = phone.dropFirst()
        return (7...15).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    // MARK: - Tokens

    /// An RS256 ID token (claims per §1.4 and the Admin SDK's `DecodedIdToken`) and a refresh token.
    private func issueTokens(
        _ user: EmulatorUser, signInProvider: String, secondFactor: (kind: String, id: String)?, expiresIn: Bool
    ) throws -> [String: Any] {
        let refreshToken = Encoding.randomToken(length: 64)
        refreshTokens[refreshToken] = RefreshRecord(
            localId: user.localId, signInProvider: signInProvider, secondFactor: secondFactor?.kind,
            secondFactorIdentifier: secondFactor?.id)
        var tokens: [String: Any] = [
            "idToken": try idToken(user, signInProvider: signInProvider, secondFactor: secondFactor), "refreshToken": refreshToken,
        ]
        if expiresIn { tokens["expiresIn"] = String(Int(configuration.tokenLifetime)) }
        return tokens
    }

    private func idToken(_ user: EmulatorUser, signInProvider: String, secondFactor: (kind: String, id: String)?) throws -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        var firebase: [String: Any] = ["identities": ["email": [user.email]], "sign_in_provider": signInProvider]
        if let secondFactor {
            firebase["sign_in_second_factor"] = secondFactor.kind
            firebase["second_factor_identifier"] = secondFactor.id
        }
        var claims: [String: Any] = [
            "iss": "https://securetoken.google.com/\(configuration.projectID)", "aud": configuration.projectID,
            "auth_time": issuedAt, "user_id": user.localId, "sub": user.localId, "iat": issuedAt,
            "exp": issuedAt + Int(configuration.tokenLifetime), "email": user.email, "email_verified": user.emailVerified,
            "firebase": firebase,
        ]
        if let name = user.displayName, !name.isEmpty { claims["name"] = name }
        return try signer.sign(claims)
    }

    /// §1.8: form or JSON body (snake_case or camelCase), snake_case answer with every value a string.
    private func grantToken(_ request: EmulatorRequest) throws -> EmulatorResponse {
        var fields: [String: String] = [:]
        if request.headers["content-type"]?.hasPrefix("application/json") == true {
            for (key, value) in try jsonBody(request) { fields[key] = value as? String }
            if let value = fields["grantType"] { fields["grant_type"] = value }
            if let value = fields["refreshToken"] { fields["refresh_token"] = value }
        } else {
            fields = Encoding.formDecode(String(decoding: request.body, as: UTF8.self))
        }
        guard let grantType = fields["grant_type"], !grantType.isEmpty else { throw APIError.badRequest("MISSING_GRANT_TYPE") }
        guard grantType == "refresh_token" else { throw APIError.badRequest("INVALID_GRANT_TYPE") }
        guard let token = fields["refresh_token"], !token.isEmpty else { throw APIError.badRequest("MISSING_REFRESH_TOKEN") }
        guard let record = refreshTokens[token] else { throw APIError.badRequest("INVALID_REFRESH_TOKEN") }
        guard let user = users[record.localId] else { throw APIError.badRequest("USER_NOT_FOUND") }
        if user.disabled { throw APIError.badRequest("USER_DISABLED") }
        // Second-factor claims survive refresh (§1.8, Firebase emulator `grantToken`).
        let secondFactor = record.secondFactor.map { ($0, record.secondFactorIdentifier ?? "") }
        let idToken = try idToken(user, signInProvider: record.signInProvider, secondFactor: secondFactor)
        return .json([
            "access_token": idToken, "expires_in": String(Int(configuration.tokenLifetime)), "token_type": "Bearer",
            "refresh_token": token, "id_token": idToken, "user_id": user.localId, "project_id": configuration.projectNumber,
        ])
    }
}
