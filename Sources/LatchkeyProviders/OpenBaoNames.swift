public import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// What OpenBao takes as an address, a mount, a path and a role, checked where a person wrote
/// them (config.toml's `[openbao]`, a provider file's `openbao_address`, `openbao-token`'s
/// options) before anything is sent.
public enum OpenBaoNames {
    /// `raw` as an OpenBao address: an http(s) URL by the endpoint rules, with no query (the
    /// API's paths are appended to it).
    public static func address(_ raw: String) throws(OpenBaoNameError) -> URL {
        switch EndpointURL.validate(raw) {
        case .success(let url):
            guard url.query == nil else { throw .invalidAddress(raw, problem: "must not contain a ?query") }
            return url
        case .failure(let problem):
            throw .invalidAddress(raw, problem: problem.description)
        }
    }

    /// What OpenBao accepts as a role or a mount's path segment (Vault's `GenericNameRegex`):
    /// letters, digits, `_`, `-` and `.`, beginning and ending with a letter, digit or `_`. So
    /// no segment is `.` or `..`, and nothing here needs escaping in a URL path.
    public static func isName(_ text: Substring) -> Bool {
        let isWord = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
        guard let first = text.utf8.first, let last = text.utf8.last, text.utf8.count <= 256 else { return false }
        return isWord(first) && isWord(last) && text.utf8.allSatisfy { isWord($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Refuses a role that is not an OpenBao name, before any sign-in.
    public static func checkRole(_ role: String) throws(OpenBaoNameError) {
        guard isName(role[...]) else {
            throw .invalidName(
                role, option: "--role", rule: "must be letters, digits, '_', '-' and '.', beginning and ending with a letter, digit or '_'")
        }
    }

    /// Refuses a mount path that is not OpenBao names joined by `/`, before any sign-in.
    public static func checkMount(_ mount: String, option: String) throws(OpenBaoNameError) {
        guard mount.split(separator: "/", omittingEmptySubsequences: false).allSatisfy(isName) else {
            throw .invalidName(
                mount, option: option,
                rule: "must be a mount path such as jwt or team/oidc: names of letters, digits, '_', '-' and '.' joined by '/'")
        }
    }

    /// Refuses a secret path that is not OpenBao names joined by `/`: nothing in it may change
    /// the request's path (`..`, an empty segment, `%2f`) or need escaping.
    public static func checkPath(_ path: String) throws(OpenBaoNameError) {
        guard path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy(isName) else {
            throw .invalidName(
                path, option: "path",
                rule: "must be a secret path such as team/accounts: names of letters, digits, '_', '-' and '.' joined by '/'")
        }
    }
}

/// A name or address OpenBao could not take, refused before anything is sent.
public enum OpenBaoNameError: LatchkeyError, Equatable {
    /// An address that breaks the endpoint rules (`EndpointURL`), or carries a query.
    case invalidAddress(String, problem: String)
    /// A role or mount OpenBao could not take as a path segment; `option` names the flag or key.
    case invalidName(String, option: String, rule: String)

    public var category: FailureCategory { .usage }

    public var description: String {
        switch self {
        case .invalidAddress(let raw, let problem):
            return "OpenBao address \"\(TerminalText.sanitized(raw, maxLength: 200))\": \(problem)"
        case .invalidName(let value, let option, let rule):
            return "\(option) \"\(TerminalText.sanitized(value, maxLength: 120))\" \(rule)"
        }
    }
}
