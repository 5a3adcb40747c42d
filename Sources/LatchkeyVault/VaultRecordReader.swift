import FoundationEssentials

/// Reads the records out of the vault's JSON without `JSONDecoder`, whose keyed containers cost
/// about 15 µs a record: 3 ms of the launcher's 5 ms for `latchkey token` with 200 accounts.
///
/// Strict JSON (RFC 8259) in the shape `VaultContents.encode` writes: `{"accounts":[{…},…]}`
/// with each record's synthesized `Encodable` keys. Keys it does not know are skipped, as
/// `JSONDecoder` skips them, so a vault written by a newer Latchkey still reads. Anything else
/// throws, and `VaultContents.decode` then asks `JSONDecoder`: a record this reader gets wrong
/// can cost speed, never an account. `VaultRecordReaderTests` pins it against `JSONDecoder`.
struct VaultRecordReader {
    struct Malformed: Error, Equatable {
        /// The byte offset where reading stopped, or the missing key.
        var reason: String
    }

    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Every record, in order; throws unless the whole input is one well-formed document.
    mutating func records() throws(Malformed) -> [AccountRecord] {
        var records: [AccountRecord] = []
        var sawAccounts = false
        try expect(UInt8(ascii: "{"))
        var members = Sequence()
        while let key = try nextMember(&members) {
            guard key == "accounts" else {
                try skipValue()
                continue
            }
            sawAccounts = true
            try expect(UInt8(ascii: "["))
            var elements = Sequence()
            while try nextElement(&elements) { records.append(try record()) }
        }
        skipWhitespace()
        guard position == bytes.count else { throw failure("text after the document") }
        guard sawAccounts else { throw Malformed(reason: "no accounts") }
        return records
    }

    // MARK: - One record

    private mutating func record() throws(Malformed) -> AccountRecord {
        var provider, issuer, subject, tokenType: String?
        var displayName, secondFactor, lastError: String?
        var accessToken: Secret?
        var refreshToken, idToken: Secret?
        var expiresAt, createdAt, updatedAt: Date?
        var scopes: [String]?
        var isDefault: Bool?
        var dpopKey: Secret?
        var narrowedTokens: [NarrowedToken]?
        var awsCredentials: [AWSRoleCredential]?
        try expect(UInt8(ascii: "{"))
        var members = Sequence()
        while let key = try nextMember(&members) {
            switch key {
            case "provider": provider = try string()
            case "issuer": issuer = try string()
            case "subject": subject = try string()
            case "displayName": displayName = try optionalString()
            case "accessToken": accessToken = Secret(try string())
            case "tokenType": tokenType = try string()
            case "refreshToken": refreshToken = try optionalString().map(Secret.init)
            case "idToken": idToken = try optionalString().map(Secret.init)
            case "expiresAt": expiresAt = null() ? nil : try date()
            case "scopes": scopes = try strings()
            case "secondFactor": secondFactor = try optionalString()
            case "createdAt": createdAt = try date()
            case "updatedAt": updatedAt = try date()
            case "lastError": lastError = try optionalString()
            case "isDefault": isDefault = null() ? nil : try boolean()
            case "dpopKey": dpopKey = try optionalString().map(Secret.init)
            case "narrowedTokens": narrowedTokens = null() ? nil : try narrowed()
            case "awsCredentials": awsCredentials = null() ? nil : try aws()
            default: try skipValue()
            }
        }
        guard let provider, let issuer, let subject, let accessToken, let tokenType, let scopes, let createdAt, let updatedAt else {
            throw Malformed(reason: "a record without one of its required keys")
        }
        var record = AccountRecord(
            provider: provider, issuer: issuer, subject: subject, displayName: displayName, accessToken: accessToken,
            tokenType: tokenType, refreshToken: refreshToken, idToken: idToken, expiresAt: expiresAt, scopes: scopes,
            secondFactor: secondFactor, createdAt: createdAt, updatedAt: updatedAt, lastError: lastError)
        record.isDefault = isDefault
        record.dpopKey = dpopKey
        record.narrowedTokens = narrowedTokens
        record.awsCredentials = awsCredentials
        return record
    }

    private mutating func aws() throws(Malformed) -> [AWSRoleCredential] {
        var credentials: [AWSRoleCredential] = []
        try expect(UInt8(ascii: "["))
        var elements = Sequence()
        while try nextElement(&elements) {
            var roleARN, sessionName, endpoint, accessKeyID: String?
            var secretAccessKey, sessionToken: Secret?
            var expiresAt, issuedAt, lastUsedAt: Date?
            try expect(UInt8(ascii: "{"))
            var members = Sequence()
            while let key = try nextMember(&members) {
                switch key {
                case "roleARN": roleARN = try string()
                case "sessionName": sessionName = try string()
                case "endpoint": endpoint = try string()
                case "accessKeyID": accessKeyID = try string()
                case "secretAccessKey": secretAccessKey = Secret(try string())
                case "sessionToken": sessionToken = Secret(try string())
                case "expiresAt": expiresAt = try date()
                case "issuedAt": issuedAt = try date()
                case "lastUsedAt": lastUsedAt = null() ? nil : try date()
                default: try skipValue()
                }
            }
            guard let roleARN, let sessionName, let endpoint, let accessKeyID, let secretAccessKey, let sessionToken, let expiresAt,
                let issuedAt
            else { throw Malformed(reason: "AWS credentials without one of their required keys") }
            credentials.append(
                AWSRoleCredential(
                    roleARN: roleARN, sessionName: sessionName, endpoint: endpoint, accessKeyID: accessKeyID,
                    secretAccessKey: secretAccessKey, sessionToken: sessionToken, expiresAt: expiresAt, issuedAt: issuedAt,
                    lastUsedAt: lastUsedAt))
        }
        return credentials
    }

    private mutating func narrowed() throws(Malformed) -> [NarrowedToken] {
        var tokens: [NarrowedToken] = []
        try expect(UInt8(ascii: "["))
        var elements = Sequence()
        while try nextElement(&elements) {
            var resource, tokenType: String?
            var scopes: [String]?
            var accessToken: Secret?
            var expiresAt, issuedAt, lastUsedAt: Date?
            try expect(UInt8(ascii: "{"))
            var members = Sequence()
            while let key = try nextMember(&members) {
                switch key {
                case "resource": resource = try optionalString()
                case "scopes": scopes = try strings()
                case "accessToken": accessToken = Secret(try string())
                case "tokenType": tokenType = try string()
                case "expiresAt": expiresAt = null() ? nil : try date()
                case "issuedAt": issuedAt = try date()
                case "lastUsedAt": lastUsedAt = null() ? nil : try date()
                default: try skipValue()
                }
            }
            guard let scopes, let accessToken, let tokenType, let issuedAt else {
                throw Malformed(reason: "a narrowed token without one of its required keys")
            }
            tokens.append(
                NarrowedToken(
                    resource: resource, scopes: scopes, accessToken: accessToken, tokenType: tokenType, expiresAt: expiresAt,
                    issuedAt: issuedAt, lastUsedAt: lastUsedAt))
        }
        return tokens
    }

    /// Dates as `JSONEncoder.DateEncodingStrategy.secondsSince1970` writes them.
    private mutating func date() throws(Malformed) -> Date { Date(timeIntervalSince1970: try number()) }

    private mutating func strings() throws(Malformed) -> [String] {
        var values: [String] = []
        try expect(UInt8(ascii: "["))
        var elements = Sequence()
        while try nextElement(&elements) { values.append(try string()) }
        return values
    }

    private mutating func optionalString() throws(Malformed) -> String? { null() ? nil : try string() }

    /// Consumes a `null`, which the synthesized `Decodable` reads as `nil`, like an absent key.
    private mutating func null() -> Bool {
        skipWhitespace()
        return literal("null")
    }

    // MARK: - JSON

    /// Where a loop over an object's members or an array's elements is: before the first or not.
    private struct Sequence {
        var started = false
    }

    /// After `{` or a member's value: the next key (its `:` consumed), or `nil` at the `}`.
    private mutating func nextMember(_ sequence: inout Sequence) throws(Malformed) -> String? {
        guard try next(&sequence, closing: UInt8(ascii: "}")) else { return nil }
        let key = try string()
        try expect(UInt8(ascii: ":"))
        return key
    }

    /// After `[` or an element: `true` when another element follows, `false` at the `]`.
    private mutating func nextElement(_ sequence: inout Sequence) throws(Malformed) -> Bool {
        try next(&sequence, closing: UInt8(ascii: "]"))
    }

    private mutating func next(_ sequence: inout Sequence, closing: UInt8) throws(Malformed) -> Bool {
        skipWhitespace()
        if !sequence.started {
            sequence.started = true
            guard peek() == closing else { return true }
            position += 1
            return false
        }
        return try separator(closing: closing)
    }

    /// After a member or element: `true` at a comma, `false` at the closing bracket.
    private mutating func separator(closing: UInt8) throws(Malformed) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: ","):
            position += 1
            return true
        case closing:
            position += 1
            return false
        default:
            throw failure("expected , or \(Character(Unicode.Scalar(closing)))")
        }
    }

    private mutating func skipValue() throws(Malformed) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "{"):
            position += 1
            var members = Sequence()
            while try nextMember(&members) != nil { try skipValue() }
        case UInt8(ascii: "["):
            position += 1
            var elements = Sequence()
            while try nextElement(&elements) { try skipValue() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try boolean()
        case UInt8(ascii: "n"): guard literal("null") else { throw failure("expected null") }
        default: _ = try number()
        }
    }

    private mutating func boolean() throws(Malformed) -> Bool {
        skipWhitespace()
        if literal("true") { return true }
        if literal("false") { return false }
        throw failure("expected true or false")
    }

    /// A number by RFC 8259's grammar (no `inf`, `nan`, hex or leading `+`), then read by the
    /// standard library as a `Double`, as `JSONDecoder` reads it.
    private mutating func number() throws(Malformed) -> Double {
        skipWhitespace()
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("expected a number") }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let digit = peek(), isDigit(digit) else { throw failure("expected a digit") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek(), isDigit(digit) else { throw failure("expected an exponent") }
            skipDigits()
        }
        guard let value = Double(String(decoding: bytes[start..<position], as: UTF8.self)), value.isFinite else {
            throw failure("a number out of range")
        }
        return value
    }

    private mutating func string() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        // Most strings have no escape: one validated UTF-8 copy of the bytes between the quotes.
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            position += 1
        }
        guard peek() == UInt8(ascii: "\\") else {
            guard peek() == UInt8(ascii: "\""), let text = String(validating: bytes[start..<position], as: UTF8.self) else {
                throw failure("an unterminated or invalid UTF-8 string")
            }
            position += 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        guard let prefix = String(validating: bytes[start..<position], as: UTF8.self) else { throw failure("invalid UTF-8") }
        scalars.append(contentsOf: prefix.unicodeScalars)
        var pending: [UInt8] = []
        func flush() throws(Malformed) {
            guard !pending.isEmpty else { return }
            guard let text = String(validating: pending, as: UTF8.self) else { throw failure("invalid UTF-8") }
            scalars.append(contentsOf: text.unicodeScalars)
            pending.removeAll(keepingCapacity: true)
        }
        while true {
            guard let byte = peek() else { throw failure("an unterminated string") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                try flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flush()
                scalars.append(try escape())
            case ..<0x20:
                throw failure("a control character in a string")
            default:
                pending.append(byte)
            }
        }
    }

    /// The character after a backslash (already consumed), with `\uD83D\uDE00` pairs joined.
    private mutating func escape() throws(Malformed) -> Unicode.Scalar {
        guard let byte = peek() else { throw failure("an unterminated escape") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            if (0xD800...0xDBFF).contains(unit) {
                guard literal("\\u") else { throw failure("a lone high surrogate") }
                let low = try hexUnit()
                guard (0xDC00...0xDFFF).contains(low),
                    let scalar = Unicode.Scalar(0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00))
                else { throw failure("a broken surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("a lone low surrogate") }
            return scalar
        default:
            throw failure("an unknown escape")
        }
    }

    private mutating func hexUnit() throws(Malformed) -> UInt16 {
        guard bytes.count - position >= 4 else { throw failure("a short \\u escape") }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a bad \\u escape")
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    // MARK: - Bytes

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { position += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        skipWhitespace()
        guard peek() == byte else { throw failure("expected \(Character(Unicode.Scalar(byte)))") }
        position += 1
    }

    /// Consumes `text` if the input continues with it.
    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let matches = text.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[position + $0] == expected[$0] } }
        if matches { position += count }
        return matches
    }

    private func failure(_ what: String) -> Malformed { Malformed(reason: "\(what) at byte \(position)") }
}
