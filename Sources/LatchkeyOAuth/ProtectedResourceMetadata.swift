public import Foundation

/// The members of a protected resource's metadata (RFC 9728 §2) that Latchkey reads.
public struct ProtectedResourceMetadata: Decodable, Sendable, Equatable {
    /// `resource`: the resource's identifier, which must be the URL the metadata was looked up
    /// for (§3.3).
    public var resource: String
    /// `authorization_servers`: the issuers whose tokens the resource takes.
    public var authorizationServers: [String]?
    /// `scopes_supported`
    public var scopesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case resource
        case authorizationServers = "authorization_servers"
        case scopesSupported = "scopes_supported"
    }

    /// Where the metadata of `resource` is looked for when no challenge names it: the
    /// well-known path inserted before the resource's path (RFC 9728 §3.1), then at the root
    /// (the MCP authorization spec's fallback); one URL for a resource at the root.
    public static func wellKnownURLs(for resource: URL) -> [URL] {
        guard var components = URLComponents(url: resource, resolvingAgainstBaseURL: false) else { return [] }
        let path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.fragment = nil
        components.path = "/.well-known/oauth-protected-resource" + path
        var root = components
        root.path = "/.well-known/oauth-protected-resource"
        root.query = nil
        return [components.url, root.url].compactMap { $0 }.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// `url` as the MCP authorization spec's canonical server URI: scheme and host lowercased,
    /// the default port and a path of just `/` dropped, no fragment; `nil` when it is no URL
    /// with a host. Two identifiers name one resource when these are equal.
    public static func canonical(_ url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let host = components.host, !host.isEmpty,
            let scheme = components.scheme?.lowercased()
        else { return nil }
        components.scheme = scheme
        components.host = host.lowercased()
        if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80) { components.port = nil }
        if components.path == "/" { components.path = "" }
        components.fragment = nil
        return components.string
    }
}
