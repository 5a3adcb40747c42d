import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Firebase REST responses in the shapes of Google's published docs")
struct FirebaseRESTShapeTests {
    static let settings = FirebaseSettings(apiKey: "fake key/+", projectID: "demo-latchkey")

    func backend(_ answers: [String], status: Int = 200) throws -> (FirebaseBackend, RecordingTransport) {
        let transport = RecordingTransport(try answers.map { HTTPResponse(status: status, body: try fixtures.bytes($0)) })
        return (FirebaseBackend(settings: Self.settings, transport: transport), transport)
    }

    @Test("signInWithPassword tokens: expiresIn is read from its string")
    func passwordTokens() async throws {
        let (backend, transport) = try backend(["signInWithPassword-tokens.json"])
        let outcome = try await backend.signIn(.password(email: "user@example.com", password: Secret("pw")))
        #expect(
            outcome
                == .signedIn(
                    SignInTokens(
                        idToken: Secret("fake-id-token.not-a-real-jwt.signature"), refreshToken: Secret("fake-refresh-token"),
                        expiresIn: 3600)))
        let request = try #require(transport.sent.first)
        #expect(request.url.absoluteString == "https://identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=fake%20key%2F%2B")
        #expect(request.headers.contains { $0 == ("Content-Type", "application/json") })
        let body = transport.body(0)
        #expect(body["email"] as? String == "user@example.com")
        #expect(body["password"] as? String == "pw")
        #expect(body["returnSecureToken"] as? Bool == true)
    }

    @Test("an MFA-pending answer gives phone and TOTP hints with the masked number exactly as sent")
    func pendingHints() async throws {
        let (backend, _) = try backend(["signInWithPassword-mfa-pending.json"])
        let outcome = try await backend.signIn(.password(email: "u@example.com", password: Secret("pw")))
        guard case .secondFactorRequired(let hints, let pending) = outcome else {
            Issue.record("expected a second factor, got \(outcome)")
            return
        }
        #expect(pending.value.exposedValue == "AMzJoS-fake-opaque-pending-credential")
        #expect(hints.map(\.kind) == [.phone, .totp])
        #expect(hints[0].id == "6e11e8de-bbd3-4afa-b379-8cfba337d640")
        #expect(hints[0].phoneNumber == "+*******7074")
        #expect(hints[0].displayName == "Work phone")
        #expect(hints[0].enrolledAt == Date(timeIntervalSince1970: 1_714_566_896.789))
        #expect(hints[1].phoneNumber == nil)
        #expect(hints[1].enrolledAt != nil)
    }

    @Test("an enrolledAt with a 40-digit fraction still gives its hint and date (ICU died of SIGFPE on it)")
    func enrolledAtLongFraction() async throws {
        let (backend, _) = try backend(["signInWithPassword-mfa-long-fraction.json"])
        let outcome = try await backend.signIn(.password(email: "u@example.com", password: Secret("pw")))
        guard case .secondFactorRequired(let hints, _) = outcome else {
            Issue.record("expected a second factor, got \(outcome)")
            return
        }
        #expect(hints.map(\.kind) == [.totp])
        let enrolledAt = try #require(hints[0].enrolledAt)
        #expect(abs(enrolledAt.timeIntervalSince1970 - 1_484_443_815.777_777_777) < 1e-6)
    }

    @Test("mfaSignIn:start and :finalize send the documented fields and read sessionInfo and tokens")
    func startAndFinalize() async throws {
        let (backend, transport) = try backend(["mfaSignIn-start.json", "mfaSignIn-finalize.json"])
        let hint = SecondFactorHint(id: "enrollment-1", kind: .phone, displayName: nil, phoneNumber: "+*******7074")
        let pending = PendingCredential(Secret("pending-1"))
        let session = try await backend.startSignIn(hint: hint, pending: pending)
        #expect(session.sessionInfo == Secret("fake-session-info-opaque"))
        let tokens = try await backend.finalizeSignIn(session: session, code: Secret("123456"), pending: pending)
        #expect(
            tokens
                == SignInTokens(
                    idToken: Secret("fake-id-token-after-mfa"), refreshToken: Secret("fake-refresh-token-after-mfa"), expiresIn: nil))
        #expect(transport.sent[0].url.path == "/v2/accounts/mfaSignIn:start")
        #expect(transport.body(0)["mfaEnrollmentId"] as? String == "enrollment-1")
        #expect(transport.body(0)["mfaPendingCredential"] as? String == "pending-1")
        #expect(transport.sent[1].url.path == "/v2/accounts/mfaSignIn:finalize")
        let verification = try #require(transport.body(1)["phoneVerificationInfo"] as? [String: String])
        #expect(verification == ["sessionInfo": "fake-session-info-opaque", "code": "123456"])
    }

    @Test("mfaEnrollment:start reads phoneSessionInfo; lookup's full numbers are masked on the way in")
    func enrollmentAndLookup() async throws {
        let (backend, transport) = try backend(["mfaEnrollment-start.json", "lookup.json"])
        let session = try await backend.startPhoneEnrollment(phoneNumber: "+15555550111", idToken: Secret("id"))
        #expect(session == Secret("fake-enrollment-session-info"))
        #expect(transport.body(0)["phoneEnrollmentInfo"] as? [String: String] == ["phoneNumber": "+15555550111"])
        let factors = try await backend.enrolledFactors(idToken: Secret("id"))
        #expect(factors.map(\.phoneNumber) == ["+*******7074"])
    }

    @Test("securetoken refresh sends a form body and reads the snake_case answer")
    func refresh() async throws {
        let (backend, transport) = try backend(["token-refresh.json"])
        let tokens = try await backend.refresh(Secret("old refresh"))
        #expect(
            tokens
                == SignInTokens(
                    idToken: Secret("fake-refreshed-id-token"), refreshToken: Secret("fake-rotated-refresh-token"), expiresIn: 3600))
        let request = try #require(transport.sent.first)
        #expect(request.url.absoluteString == "https://securetoken.googleapis.com/v1/token?key=fake%20key%2F%2B")
        #expect(String(decoding: request.body ?? [], as: UTF8.self) == "grant_type=refresh_token&refresh_token=old%20refresh")
    }

    @Test("a TOTP finalize sends the enrollment ID with totpVerificationInfo and no phoneVerificationInfo")
    func totpFinalizeBody() async throws {
        let (backend, transport) = try backend(["mfaSignIn-finalize.json"])
        let hint = SecondFactorHint(id: "totp-1", kind: .totp, displayName: nil, phoneNumber: nil)
        _ = try await backend.finalizeSignIn(
            session: VerificationSession(sessionInfo: nil, hint: hint), code: Secret("654321"), pending: PendingCredential(Secret("p")))
        let body = transport.body(0)
        #expect(Set(body.keys) == ["mfaPendingCredential", "mfaEnrollmentId", "totpVerificationInfo"])
        #expect(body["mfaEnrollmentId"] as? String == "totp-1")
        #expect(body["totpVerificationInfo"] as? [String: String] == ["verificationCode": "654321"])
    }

    @Test("mfaSignIn:start sends phoneSignInInfo even when the hint has no number")
    func startWithoutNumber() async throws {
        let (backend, transport) = try backend(["mfaSignIn-start.json"])
        let hint = SecondFactorHint(id: "enrollment-1", kind: .phone, displayName: nil, phoneNumber: nil)
        _ = try await backend.startSignIn(hint: hint, pending: PendingCredential(Secret("p")))
        #expect(transport.body(0)["phoneSignInInfo"] as? [String: String] == [:])
    }

    @Test("signInWithIdp sends the manual credential as a form-encoded postBody")
    func federatedBody() async throws {
        let (backend, transport) = try backend(["signInWithPassword-tokens.json"])
        _ = try await backend.signIn(.federated(providerID: "google.com", idToken: Secret("fake-google-id-token")))
        let body = transport.body(0)
        #expect(body["requestUri"] as? String == "http://localhost")
        #expect(body["postBody"] as? String == "id_token=fake-google-id-token&providerId=google.com")
        #expect(body["returnSecureToken"] as? Bool == true)
        #expect(body["returnIdpCredential"] as? Bool == true)
    }

    @Test("mfaEnrollment:finalize sends displayName only when one was given", arguments: ["Desk phone", nil] as [String?])
    func enrollmentFinalizeBody(displayName: String?) async throws {
        let (backend, transport) = try backend(["mfaSignIn-finalize.json"])
        _ = try await backend.finalizePhoneEnrollment(
            sessionInfo: Secret("s"), code: Secret("123456"), displayName: displayName, idToken: Secret("id"))
        let body = transport.body(0)
        #expect(body["displayName"] as? String == displayName)
        #expect(body.keys.contains("displayName") == (displayName != nil))
        #expect(body["phoneVerificationInfo"] as? [String: String] == ["sessionInfo": "s", "code": "123456"])
        #expect(body["idToken"] as? String == "id")
    }

    @Test(
        "error envelopes are matched on the code before the first colon",
        arguments: [
            ("error-invalid-login-credentials.json", FirebaseAuthError.invalidCredentials(code: "INVALID_LOGIN_CREDENTIALS")),
            ("error-too-many-attempts.json", .tooManyAttempts),
            ("error-invalid-app-credential.json", .appVerificationRequired(code: "INVALID_APP_CREDENTIAL", message: "")),
            ("error-emulator-pending-credential.json", .pendingCredentialInvalid(code: "INVALID_MFA_PENDING_CREDENTIAL")),
        ])
    func errors(fixture: String, expected: FirebaseAuthError) async throws {
        let (backend, _) = try backend([fixture], status: 400)
        await #expect(throws: expected) { try await backend.signIn(.password(email: "u@example.com", password: Secret("pw"))) }
    }

    @Test("the reCAPTCHA demand is shown with the server's code and what works instead")
    func appVerificationMessage() {
        let text = FirebaseAuthError.appVerificationRequired(code: "INVALID_APP_CREDENTIAL", message: "").description
        #expect(text.contains("INVALID_APP_CREDENTIAL"))
        #expect(text.contains("test phone number"))
    }

    @Test("full numbers are masked as + then * for every digit but the last four; masked ones are kept")
    func masking() {
        #expect(PhoneNumberMask.maskedIfFull("+15555550100") == "+*******0100")
        #expect(PhoneNumberMask.maskedIfFull("+447700900123") == "+********0123")
        #expect(PhoneNumberMask.maskedIfFull("+*******7074") == "+*******7074")
        #expect(SecondFactorHint(id: "x", kind: .phone, displayName: nil, phoneNumber: "+15555550100").phoneNumber == "+*******0100")
    }

    @Test(
        "a number written with spaces, dashes or brackets keeps its shape with every digit but the last four masked",
        arguments: [
            ("+1 555 555 0100", "+* *** *** 0100"), ("+1-555-555-0100", "+*-***-***-0100"), ("+1 (555) 555-0100", "+* (***) ***-0100"),
            ("+44 7700 900123", "+** **** **0123"), ("555 0100", "*** 0100"), ("0100", "0100"), ("+*** *** 0100", "+*** *** 0100"),
        ])
    func maskingWrittenNumbers(number: String, masked: String) {
        #expect(PhoneNumberMask.maskedIfFull(number) == masked)
        #expect(SecondFactorHint(id: "x", kind: .phone, displayName: nil, phoneNumber: number).phoneNumber == masked)
    }

    @Test("secrets never show in descriptions of tokens and credentials")
    func redaction() {
        let tokens = SignInTokens(idToken: Secret("id-secret"), refreshToken: Secret("refresh-secret"), expiresIn: nil)
        #expect(!"\(tokens)".contains("secret"))
        #expect(!"\(PendingCredential(Secret("pending-secret")))".contains("pending-secret"))
    }
}
