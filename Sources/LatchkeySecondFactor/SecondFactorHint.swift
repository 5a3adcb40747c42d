public import Foundation
import LatchkeyEssentials
import LatchkeyVault

/// One enrolled second factor, as offered after the first factor (Firebase `mfaInfo[]`,
/// docs/firebase-mfa-protocol.md §2; the iOS SDK's `MultiFactorInfo`).
public struct SecondFactorHint: Sendable, Equatable, Identifiable {
    /// The factor's kind: Firebase `factorId` (`phone` or `totp`).
    public enum Kind: String, Sendable, Equatable, Codable {
        case phone
        case totp
    }

    /// `mfaEnrollmentId`: opaque, sent back to start and finalize.
    public var id: String
    public var kind: Kind
    /// `displayName`: the person's own label, such as "Work phone"; may be empty.
    public var displayName: String?
    /// `phoneInfo`: the masked number exactly as the server sent it (`+*******0100`), or masked
    /// here when a backend handed over a full number (see `PhoneNumberMask`).
    public var phoneNumber: String?
    /// `enrolledAt`, when the server sent one that parses.
    public var enrolledAt: Date?

    public init(id: String, kind: Kind, displayName: String?, phoneNumber: String?, enrolledAt: Date? = nil) {
        self.id = id
        self.kind = kind
        self.displayName = displayName
        self.phoneNumber = phoneNumber.map(PhoneNumberMask.maskedIfFull)
        self.enrolledAt = enrolledAt
    }

    /// One line for a menu: label, then the masked number or "authenticator app".
    public var summary: String {
        let what = kind == .phone ? (phoneNumber ?? "phone") : "authenticator app (TOTP)"
        guard let displayName, !displayName.isEmpty else { return TerminalText.sanitized(what, maxLength: 80) }
        return TerminalText.sanitized("\(displayName): \(what)", maxLength: 120)
    }
}
