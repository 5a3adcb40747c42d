import Foundation
import LatchkeySupport

#if canImport(Glibc)
    import Glibc
#endif

/// A host as git's credential protocol names it: `host[:port]`, where host is a DNS name, an
/// IPv4 address or a bracketed IPv6 address (gitcredentials(7): "This includes the port number
/// if one was specified").
///
/// The one reader of both sides of the match: `git_hosts` entries in provider files and the
/// `host` attribute of a request, so a file entry and git's value compare the same way.
public struct GitHost: Sendable, Hashable, CustomStringConvertible {
    /// The host, lowercased; IPv6 addresses keep their brackets.
    public var host: String
    /// The port when one was written; `example.com` and `example.com:443` are different entries.
    public var port: Int?

    public enum Problem: Error, Equatable, CustomStringConvertible {
        case empty
        case hasScheme
        case hasPath
        case badHost
        case badPort

        public var description: String {
            switch self {
            case .empty: return "is empty"
            case .hasScheme: return "must be a host, not a URL: remove the scheme (\"https://\")"
            case .hasPath: return "must be a host[:port] without a path, query or user"
            case .badHost: return "is not a host name, an IPv4 address or a bracketed IPv6 address such as [2001:db8::1]"
            case .badPort: return "has a port that is not a number from 1 to 65535"
            }
        }
    }

    public init(host: String, port: Int? = nil) {
        self.host = host.lowercased()
        self.port = port
    }

    /// Reads `host`, `host:port`, `[ipv6]` or `[ipv6]:port`.
    public static func parse(_ text: String) -> Result<GitHost, Problem> {
        guard !text.isEmpty else { return .failure(.empty) }
        if text.contains("://") { return .failure(.hasScheme) }
        if text.contains(where: { "/?#@\\".contains($0) }) { return .failure(.hasPath) }
        let host: Substring
        let portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return .failure(.badHost) }
            host = text[...close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return .failure(.badHost) }
            portText = rest.isEmpty ? nil : rest.dropFirst()
            guard isIPv6Literal(host.dropFirst().dropLast()) else { return .failure(.badHost) }
        } else {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard isHostName(host) else { return .failure(.badHost) }
        }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(portText), (1...65_535).contains(number)
            else { return .failure(.badPort) }
            port = number
        }
        return .success(GitHost(host: String(host), port: port))
    }

    /// Whether the host is a loopback address or `localhost`, where plain http is acceptable.
    public var isLoopback: Bool { EndpointURL.isLoopback(host) }

    public var description: String { port.map { "\(host):\($0)" } ?? host }

    /// Dot-separated labels of ASCII letters, digits and `-` (not at either end of a label);
    /// IPv4 addresses are such names too.
    private static func isHostName(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.count <= 253 else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    private static func isIPv6Literal(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
        var address = in6_addr()
        return inet_pton(AF_INET6, String(text), &address) == 1
    }
}
