import Foundation
public import LatchkeyVault

extension AccountRecord {
    /// A record with fake tokens; dates are whole seconds so they survive the vault's encoding exactly.
    public static func testing(
        provider: String = "google", subject: String = "110169484474386276334", displayName: String? = "alice@example.com",
        accessToken: String = "fake-access-token", refreshToken: String? = "fake-refresh-token"
    ) -> AccountRecord {
        AccountRecord(
            provider: provider, issuer: "https://accounts.example.com", subject: subject, displayName: displayName,
            accessToken: Secret(accessToken), tokenType: "Bearer", refreshToken: refreshToken.map(Secret.init), idToken: nil,
            expiresAt: Date(timeIntervalSince1970: 1_750_003_600), scopes: ["openid", "email"],
            createdAt: Date(timeIntervalSince1970: 1_750_000_000), updatedAt: Date(timeIntervalSince1970: 1_750_000_000))
    }
}
