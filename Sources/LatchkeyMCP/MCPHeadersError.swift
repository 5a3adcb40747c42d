import LatchkeyEssentials
public import LatchkeyVault

/// Why `latchkey mcp headers` gave no header.
public enum MCPHeadersError: LatchkeyError, Equatable {
    /// The account's tokens are DPoP-bound (RFC 9449): each request needs a proof naming its
    /// method and URL, which a headers helper never sees.
    case proofBound(account: String)

    public var category: FailureCategory { .usage }

    public var description: String {
        switch self {
        case .proofBound(let account):
            return
                "\(TerminalText.sanitized(account, maxLength: 120)) has DPoP-bound tokens, which need a proof of their own for every request; a headers helper cannot make one; `latchkey mcp proxy` makes one for each request"
        }
    }
}
