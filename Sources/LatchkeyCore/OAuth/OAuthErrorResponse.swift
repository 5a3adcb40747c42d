import Foundation

/// An OAuth error as the server sent it (RFC 6749 §4.1.2.1 and §5.2), kept whole so unknown
/// codes survive; every text field is sanitised when shown because the server controls it.
public struct OAuthErrorResponse: Sendable, Equatable, CustomStringConvertible {
    /// `error`
    public var error: String
    /// `error_description`
    public var errorDescription: String?
    /// `error_uri`
    public var errorURI: String?

    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    /// Reads a §5.2 error body; `nil` when the body is not JSON with a string `error` member.
    init?(body: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return nil }
        self.init(json: object)
    }

    init?(json object: [String: Any]) {
        guard let error = object["error"] as? String else { return nil }
        self.init(error: error, errorDescription: object["error_description"] as? String, errorURI: object["error_uri"] as? String)
    }

    public var description: String {
        var text = TerminalText.sanitized(error, maxLength: 100)
        if let errorDescription { text += ": " + TerminalText.sanitized(errorDescription, maxLength: 500) }
        if let errorURI { text += " (see " + TerminalText.sanitized(errorURI, maxLength: 300) + ")" }
        return text
    }
}
