import Foundation
public import LatchkeyVault

/// What git asks a credential helper: the `key=value` attributes of git-credential(1)'s input
/// format, read until a blank line or the end of input.
///
/// Only the attributes a helper matches on are kept; git adds new ones over time
/// (`capability[]`, `wwwauth[]`, `password_expiry_utc`), and a helper must ignore what it does
/// not know. `url` is split into its parts, as git itself does when it reads one.
public struct GitCredentialRequest: Sendable, Equatable {
    /// `protocol`: `https`, `http`, `ssh`…
    public var scheme: String?
    /// `host`: the remote host, with `:port` when the URL had one.
    public var host: String?
    /// `path`: sent only when `credential.useHttpPath` is set.
    public var path: String?
    /// `username`: when the URL or the configuration names one.
    public var username: String?

    public init(scheme: String? = nil, host: String? = nil, path: String? = nil, username: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.path = path
        self.username = username
    }

    /// Reads the attribute lines of `text`; stops at the first empty line.
    public init(parsing text: String) throws(GitCredentialRequestError) {
        self.init()
        var lineNumber = 0
        // git writes LF; a CRLF comes from a hand-typed or Windows-edited request (and is one
        // Character in Swift, so it must be named).
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "="), equals != line.startIndex else {
                throw .notAnAttribute(line: lineNumber)
            }
            if line.contains("\0") { throw .notAnAttribute(line: lineNumber) }
            let key = line[..<equals]
            let value = String(line[line.index(after: equals)...])
            switch key {
            case "protocol": scheme = value.lowercased()
            case "host": host = value
            case "path": path = value
            case "username": username = value
            case "url": try apply(url: value, line: lineNumber)
            default: continue
            }
        }
    }

    /// `url=https://user@host:port/path`: git treats it as if each part had been sent.
    private mutating func apply(url: String, line: Int) throws(GitCredentialRequestError) {
        guard let schemeEnd = url.range(of: "://"), schemeEnd.lowerBound != url.startIndex else { throw .badURL(line: line) }
        scheme = url[..<schemeEnd.lowerBound].lowercased()
        var rest = url[schemeEnd.upperBound...]
        if let slash = rest.firstIndex(of: "/") {
            let remainder = rest[rest.index(after: slash)...]
            path = remainder.isEmpty ? nil : String(remainder)
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            username = String(user.split(separator: ":", maxSplits: 1).first ?? user).removingPercentEncoding ?? String(user)
            rest = rest[rest.index(after: at)...]
        }
        host = rest.isEmpty ? nil : String(rest)
    }
}

/// A request that is not in git's credential format; git itself never sends one.
public enum GitCredentialRequestError: LatchkeyError, Equatable {
    case notAnAttribute(line: Int)
    case badURL(line: Int)

    public var category: FailureCategory { .usage }

    public var description: String {
        switch self {
        case .notAnAttribute(let line):
            return "git credential request line \(line) is not a key=value attribute (see git-credential(1))"
        case .badURL(let line):
            return "git credential request line \(line): url is not an absolute URL such as https://host/path"
        }
    }
}
