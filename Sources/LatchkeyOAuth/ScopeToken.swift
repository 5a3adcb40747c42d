/// A scope-token (RFC 6749 §3.3): `1*( %x21 / %x23-5B / %x5D-7E )`, visible ASCII without `"`
/// or `\`. What a server names in a challenge or its metadata becomes a sign-in's `scope`
/// parameter only if it is one.
public enum ScopeToken {
    public static func isValid(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }
    }
}
