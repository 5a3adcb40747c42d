/// What logout could do at the provider.
public enum RevocationOutcome: Sendable, Equatable {
    /// Revoked; the associated value is the token type revoked.
    case revoked(String)
    /// The provider has no revocation endpoint: the token stays valid there until it expires.
    case unsupported
}
