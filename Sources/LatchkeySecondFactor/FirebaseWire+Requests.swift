/// Identity Toolkit request bodies, field by field (docs/firebase-mfa-protocol.md §1), as the REST API names them.
/// Absent optional members are left out of the JSON.
extension FirebaseWire {
    /// `accounts:signInWithPassword` (§1.1, `GoogleCloudIdentitytoolkitV1SignInWithPasswordRequest`).
    struct SignInWithPasswordRequest: Encodable {
        var email: String
        var password: String
        /// "should always be true".
        var returnSecureToken = true
    }

    /// `accounts:signInWithIdp` (§1.2, `…V1SignInWithIdpRequest`) with a manual credential.
    struct SignInWithIdpRequest: Encodable {
        /// Only has to be a valid URL for a manual credential.
        var requestUri = "http://localhost"
        /// Form-encoded: `id_token=…&providerId=…`.
        var postBody: String
        var returnSecureToken = true
        var returnIdpCredential = true
    }

    /// `mfaSignIn:start` (§1.3, `…V2StartMfaSignInRequest`).
    struct StartMfaSignInRequest: Encodable {
        var mfaPendingCredential: String
        var mfaEnrollmentId: String
        /// Sent even when empty: production needs it to tell a phone factor.
        var phoneSignInInfo: StartMfaPhoneRequestInfo
    }

    /// `StartMfaPhoneRequestInfo` (§1.3): no app-verification fields.
    struct StartMfaPhoneRequestInfo: Encodable {
        /// Optional when signing in (the masked number of the hint), required in E.164 when enrolling.
        var phoneNumber: String?
    }

    /// `mfaSignIn:finalize` (§1.4, `…V2FinalizeMfaSignInRequest`): a phone code, or a TOTP code
    /// with the enrollment ID.
    struct FinalizeMfaSignInRequest: Encodable {
        var mfaPendingCredential: String
        var phoneVerificationInfo: PhoneVerificationInfo?
        var mfaEnrollmentId: String?
        var totpVerificationInfo: TotpVerificationInfo?
    }

    /// `phoneVerificationInfo` (§1.4, §1.6).
    struct PhoneVerificationInfo: Encodable {
        var sessionInfo: String
        var code: String
    }

    /// `totpVerificationInfo` (§1.4).
    struct TotpVerificationInfo: Encodable {
        var verificationCode: String
    }

    /// `mfaEnrollment:start` (§1.5, `…V2StartMfaEnrollmentRequest`).
    struct StartMfaEnrollmentRequest: Encodable {
        var idToken: String
        var phoneEnrollmentInfo: StartMfaPhoneRequestInfo
    }

    /// `mfaEnrollment:finalize` (§1.6, `…V2FinalizeMfaEnrollmentRequest`).
    struct FinalizeMfaEnrollmentRequest: Encodable {
        var idToken: String
        var phoneVerificationInfo: PhoneVerificationInfo
        /// The person's label for the factor ("Work phone").
        var displayName: String?
    }

    /// `accounts:lookup` (§1.9).
    struct LookupRequest: Encodable {
        var idToken: String
    }
}
