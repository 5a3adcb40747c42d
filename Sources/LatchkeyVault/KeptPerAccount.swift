public import FoundationEssentials

/// What an account keeps a bounded number of beside its own tokens (narrowed tokens, AWS role
/// credentials): a caller asking for ever new resources or roles must not grow the vault without
/// end. One rule for all of them: a new one takes the place of the one it stands for, and past
/// `keptPerAccount` the unusable go first, then the least recently used.
public protocol KeptPerAccount {
    static var keptPerAccount: Int { get }
    /// Whether `other` is for the same thing (resource and scopes, role and session…), so this one
    /// replaces it.
    func isSameKind(as other: Self) -> Bool
    /// Whether it may still be handed out at `now`.
    func isUsable(at now: Date) -> Bool
    /// When it was last issued or answered with: what "least recently used" orders by.
    var lastUse: Date { get }
}

extension KeptPerAccount {
    /// `kept` with `new` in place of any of the same kind, cut to `keptPerAccount`: the unusable
    /// go first, then the least recently used; `new` itself always stays.
    public static func keeping(_ new: Self, among kept: [Self], now: Date) -> [Self] {
        let ranked = kept.filter { !$0.isSameKind(as: new) }.sorted { left, right in
            let (leftUsable, rightUsable) = (left.isUsable(at: now), right.isUsable(at: now))
            if leftUsable != rightUsable { return leftUsable }
            return left.lastUse > right.lastUse
        }
        return Array(ranked.prefix(keptPerAccount - 1)) + [new]
    }
}
