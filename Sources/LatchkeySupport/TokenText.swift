/// What a token may hold, whoever issued it: tokens go to stdout, into HTTP headers, the kernel
/// keyring and git, so a token with a control character could drive a terminal or split a header.
/// Every token a server hands Latchkey passes `problem` before it is used or kept.
package enum TokenText {
    /// Visible ASCII only (RFC 6749 §A.12 and §A.17 allow %x20-7E; a space never appears in
    /// practice and would split a header, so it is refused too).
    package static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// Why the server's `member` cannot be a token, or `nil` when it can (or is absent or
    /// empty, which each caller judges for itself). Names the member, never the value.
    package static func problem(_ value: String?, member: String) -> String? {
        guard let value, !value.isEmpty, !isValid(value) else { return nil }
        return "\(member) holds characters no token has (spaces or control characters)"
    }
}
