/// When an access token still counts as valid: the one rule the full command
/// (`AccountRecord.isValid`), the launcher's vault answer and its token-copy answer all apply, on
/// whole Unix seconds because this module has no Foundation.
public enum TokenValidity {
    /// Whether a token issued at `issuedAt` and expiring at `expiresAt` is still valid `margin`
    /// seconds after `now`.
    ///
    /// The margin is capped at half the token's whole lifetime (issue to expiry): a provider that
    /// issues 60-second tokens would otherwise make `--min-ttl 60` refresh on every call, even
    /// right after another process refreshed. So the token is valid when more than `margin`
    /// seconds remain, or when time remains and more than half its lifetime does. A negative
    /// margin counts as none: no margin makes an expired token valid. Computed in 128 bits, so no
    /// input can overflow.
    public static func isValid(issuedAt: Int, expiresAt: Int, now: Int, margin: Int) -> Bool {
        let remaining = Int128(expiresAt) - Int128(now)
        let lifetime = Int128(expiresAt) - Int128(issuedAt)
        return remaining > Int128(max(0, margin)) || (remaining > 0 && 2 * remaining > lifetime)
    }
}
