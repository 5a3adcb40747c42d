import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

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
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(body)), let error = wire.error else { return nil }
        self.init(error: error, errorDescription: wire.errorDescription, errorURI: wire.errorURI)
    }

    public var description: String {
        var text = TerminalText.sanitized(error, maxLength: 100)
        if let errorDescription { text += ": " + TerminalText.sanitized(errorDescription, maxLength: 500) }
        if let errorURI { text += " (see " + TerminalText.sanitized(errorURI, maxLength: 300) + ")" }
        return text
    }
}

extension OAuthErrorResponse {
    /// The §5.2 members as they arrive. Read forgivingly: a description or URI of another type is
    /// dropped rather than hiding the error code.
    struct Wire: Decodable {
        var error: String?
        var errorDescription: String?
        var errorURI: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
            case errorURI = "error_uri"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            error = container.lenient(forKey: .error)
            errorDescription = container.lenient(forKey: .errorDescription)
            errorURI = container.lenient(forKey: .errorURI)
        }
    }
}
