public import Foundation
import LatchkeyVault

/// The rule every endpoint Latchkey talks to must follow: an absolute `https` URL, or `http`
/// only on a loopback host (RFC 8252 §8.3: plain http elsewhere leaks codes and tokens).
public enum EndpointURL {
    public enum Problem: Error, CustomStringConvertible, Equatable {
        case notAbsolute
        case insecureScheme(String)
        case hasFragment

        public var description: String {
            switch self {
            case .notAbsolute: return "not an absolute http(s) URL"
            case .insecureScheme(let host):
                return "must use https (plain http is allowed only for loopback hosts, not \(TerminalText.sanitized(host, maxLength: 80)))"
            case .hasFragment: return "must not contain a #fragment"
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

    /// True for 127.0.0.0/8, ::1 and localhost.
    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
