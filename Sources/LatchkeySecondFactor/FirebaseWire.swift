import Foundation
import LatchkeySupport

/// Identity Toolkit and securetoken response bodies, field by field (docs/firebase-mfa-protocol.md §1, §2).
enum FirebaseWire {
    /// `accounts:signInWithPassword` and `accounts:signInWithIdp` responses (§1.1, §1.2): either
    /// tokens, or `mfaPendingCredential` with `mfaInfo`.
    struct SignInResponse: Decodable {
        var localId: String?
        var email: String?
        var idToken: String?
        var refreshToken: String?
        /// Seconds, as a string (`"3600"`).
        var expiresIn: String?
        var mfaPendingCredential: String?
        var mfaInfo: [MfaEnrollment]?
        /// `signInWithIdp`: the IdP account exists with another credential (§1.2 caveats).
        var needConfirmation: Bool?
        /// `signInWithIdp` with `returnIdpCredential`: an error delivered with HTTP 200.
        var errorMessage: String?
    }

    /// One `mfaInfo[]` entry (`GoogleCloudIdentitytoolkitV1MfaEnrollment`, §2).
    struct MfaEnrollment: Decodable {
        var mfaEnrollmentId: String
        var displayName: String?
        /// Masked after a first factor, full in `accounts:lookup`.
        var phoneInfo: String?
        /// An empty object for TOTP factors: test for presence.
        var totpInfo: EmptyObject?
        var enrolledAt: String?
    }

    struct EmptyObject: Decodable {}

    /// `mfaSignIn:start` (§1.3): `{"phoneResponseInfo": {"sessionInfo": "…"}}`.
    struct StartSignInResponse: Decodable {
        var phoneResponseInfo: SessionInfo?
    }

    /// `mfaEnrollment:start` (§1.5): `{"phoneSessionInfo": {"sessionInfo": "…"}}`.
    struct StartEnrollmentResponse: Decodable {
        var phoneSessionInfo: SessionInfo?
    }

    struct SessionInfo: Decodable {
        var sessionInfo: String
    }

    /// `mfaSignIn:finalize` and `mfaEnrollment:finalize` (§1.4, §1.6): no `expiresIn`.
    struct FinalizeResponse: Decodable {
        var idToken: String
        var refreshToken: String?
    }

    /// securetoken `v1/token` (§1.8): snake_case, every value a string.
    struct GrantTokenResponse: Decodable {
        var idToken: String
        var refreshToken: String?
        var expiresIn: String?
        var userId: String?

        enum CodingKeys: String, CodingKey {
            case idToken = "id_token"
            case refreshToken = "refresh_token"
            case expiresIn = "expires_in"
            case userId = "user_id"
        }
    }

    /// `accounts:lookup` (§1.9).
    struct LookupResponse: Decodable {
        struct User: Decodable {
            var localId: String
            var email: String?
            var emailVerified: Bool?
            var mfaInfo: [MfaEnrollment]?
        }
        var users: [User]?
    }
}

extension FirebaseWire.MfaEnrollment {
    /// The hint for this enrollment; `nil` for kinds Latchkey cannot prove (email OTP).
    var hint: SecondFactorHint? {
        let kind: SecondFactorHint.Kind
        if phoneInfo != nil {
            kind = .phone
        } else if totpInfo != nil {
            kind = .totp
        } else {
            return nil
        }
        return SecondFactorHint(
            id: mfaEnrollmentId, kind: kind, displayName: displayName, phoneNumber: phoneInfo,
            // §2 `enrolledAt`: RFC 3339, with or without a fraction; never through ICU (see RFC3339).
            enrolledAt: enrolledAt.flatMap(RFC3339.date(from:)))
    }
}
