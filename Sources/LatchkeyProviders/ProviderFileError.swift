public import LatchkeyVault

/// A problem in one provider file, located as precisely as the file allows.
///
/// Printed as `FILE:LINE: FIELD: message`, the shape compilers use, so editors can jump to it.
public struct ProviderFileError: LatchkeyError, Equatable {
    public var file: String
    public var line: Int?
    public var field: String?
    public var message: String

    public init(file: String, line: Int? = nil, field: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    public var category: FailureCategory { .configuration }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let field { return "\(location): \(field): \(message)" }
        return "\(location): \(message)"
    }
}
