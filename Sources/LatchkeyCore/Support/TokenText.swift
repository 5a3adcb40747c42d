/// What a token may hold, whoever issued it: tokens go to stdout, into HTTP headers, the kernel
/// keyring and git, so a token with a control character could drive a terminal or split a header.
enum TokenText {
    /// Visible ASCII only (RFC 6749 §A.12 and §A.17 allow %x20-7E; a space never appears in
    /// practice and would split a header, so it is refused too).
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
