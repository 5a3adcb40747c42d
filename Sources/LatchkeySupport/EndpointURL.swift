public import Foundation
import LatchkeyEssentials
import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

/// The rule every endpoint Latchkey talks to must follow: an absolute `https` URL, or `http`
/// only on a loopback host (RFC 8252 §8.3: plain http elsewhere leaks codes and tokens).
public enum EndpointURL {
    public enum Problem: Error, CustomStringConvertible, Equatable {
        case notAbsolute
        case insecureScheme(String)
        case hasFragment
        /// A remote server named an address on this machine.
        case loopbackFromRemote(String)
        /// An answer named a URL on another origin than the endpoint that gave it.
        case otherOrigin(String, expected: String)

        public var description: String {
            switch self {
            case .notAbsolute: return "not an absolute http(s) URL"
            case .insecureScheme(let host):
                return "must use https (plain http is allowed only for loopback hosts, not \(TerminalText.sanitized(host, maxLength: 80)))"
            case .hasFragment: return "must not contain a #fragment"
            case .loopbackFromRemote(let host):
                return
                    "names \(TerminalText.sanitized(host, maxLength: 80)), an address on this machine, although the server is not on it; a remote server may only name https endpoints elsewhere"
            case .otherOrigin(let origin, let expected):
                return
                    "is on \(TerminalText.sanitized(origin, maxLength: 120)), not on \(TerminalText.sanitized(expected, maxLength: 120)) where it was given"
            }
        }
    }

    public static func validate(_ raw: String) -> Result<URL, Problem> {
        guard let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, let url = components.url
        else { return .failure(.notAbsolute) }
        guard components.fragment == nil else { return .failure(.hasFragment) }
        switch scheme {
        case "https": return .success(url)
        case "http": return isLoopback(host) ? .success(url) : .failure(.insecureScheme(host))
        default: return .failure(.notAbsolute)
        }
    }

    /// `validate`, and for a URL a server named (discovery, a registration answer): when that
    /// server is not on this machine, https to a host that is not either. A provider elsewhere
    /// must never steer Latchkey's requests, with their tokens, to services on loopback.
    public static func validate(_ raw: String, namedBy server: URL) -> Result<URL, Problem> {
        validate(raw).flatMap { url in
            guard let named = server.host, !isLoopback(named), let host = url.host, isLoopback(host) else { return .success(url) }
            return .failure(.loopbackFromRemote(host))
        }
    }

    /// `validate`, and on the same origin (RFC 6454: scheme, host, port) as `endpoint`: for a URL
    /// an endpoint hands back for later requests to itself (`registration_client_uri`).
    public static func validate(_ raw: String, sameOriginAs endpoint: URL) -> Result<URL, Problem> {
        validate(raw).flatMap { url in
            origin(of: url) == origin(of: endpoint)
                ? .success(url) : .failure(.otherOrigin(origin(of: url), expected: origin(of: endpoint)))
        }
    }

    /// `scheme://host:port` with the scheme's default port written out, so that
    /// `https://a.example` and `https://A.example:443/x` compare equal.
    public static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\((url.host ?? "").lowercased()):\(port)"
    }

    /// True for every way of writing an address on this machine that libcurl connects to:
    /// `localhost` and its subdomains, 127.0.0.0/8 in any IPv4 notation (`127.1`, `0x7f000001`,
    /// `2130706433`), `0.0.0.0` (which Linux connects to this host), `::1`, `::` and the IPv4
    /// loopback mapped into IPv6. A name that merely resolves to loopback is not seen here.
    public static func isLoopback(_ host: String) -> Bool {
        var bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare.hasSuffix(".") { bare.removeLast() }
        if bare == "localhost" || bare.hasSuffix(".localhost") { return true }
        if let address = ipv4Address(bare) { return address >> 24 == 127 || address == 0 }
        return ipv6IsLoopback(bare)
    }

    /// An IPv4 address as URL parsers read one (WHATWG URL §3.5, which libcurl follows): one to
    /// four parts, each decimal, `0x` hexadecimal or `0` octal, the last filling what is left.
    static func ipv4Address(_ host: String) -> UInt32? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            let text = part.lowercased()
            let number: UInt64?
            if text.hasPrefix("0x") {
                number = text.count == 2 ? 0 : UInt64(text.dropFirst(2), radix: 16)
            } else if text.count > 1 && text.hasPrefix("0") {
                number = UInt64(text.dropFirst(), radix: 8)
            } else {
                number = UInt64(text, radix: 10)
            }
            guard let number, !text.isEmpty else { return nil }
            numbers.append(number)
        }
        let last = numbers.removeLast()
        guard numbers.allSatisfy({ $0 <= 255 }), last < UInt64(1) << (8 * (4 - numbers.count)) else { return nil }
        let leading = numbers.enumerated().reduce(UInt64(0)) { $0 | $1.element << (8 * (3 - UInt64($1.offset))) }
        return UInt32(leading | last)
    }

    private static func ipv6IsLoopback(_ host: String) -> Bool {
        let address = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return false }
        let octets = withUnsafeBytes(of: bytes) { Array($0) }
        let zeroes = octets[0..<10].allSatisfy { $0 == 0 }
        if zeroes && octets[10..<15].allSatisfy({ $0 == 0 }) && (octets[15] == 1 || octets[15] == 0) { return true }  // ::1, ::
        // ::ffff:a.b.c.d and the older ::a.b.c.d: the IPv4 address inside decides.
        let mapped = zeroes && ((octets[10] == 0xFF && octets[11] == 0xFF) || (octets[10] == 0 && octets[11] == 0))
        return mapped && (octets[12] == 127 || octets[12...15].allSatisfy { $0 == 0 })
    }
}
