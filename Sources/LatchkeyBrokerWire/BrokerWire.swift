import FoundationEssentials

/// The broker's protocol on the agent's sockets: one JSON object per line each way (the encoder
/// escapes line breaks inside strings, so a newline ends a message).
///
/// A request is `{"v": 2, "client": {…}, "OPERATION": {…}}`: the version, who asks (in its own
/// words), and exactly one operation named by its key, whose object holds that operation's fields
/// and no others (`BrokerRequest`). An answer is `{"v": 2, "OPERATION": {…}}` for a release,
/// `{"v": 2, "refused": {…}}` for a refusal, and on the way `{"v": 2, "pending": "…"}` lines while
/// a person is asked (`BrokerAnswer`).
///
/// Decoding is strict: a message of another version, an operation this side does not know, or a
/// field it does not know in a known object is an error that names what was not understood and
/// both sides' versions, never a field silently dropped or read as another.
public enum BrokerWire {
    /// The protocol's version, sent in every message.
    public static let version = 2
    /// The longest request line an agent reads, newline included: a selector, a working
    /// directory (PATH_MAX is 4096) and a command line cut to `ClientClaim.commandLimit`;
    /// anything longer is refused unread.
    public static let requestLimit = 16 * 1024
    /// The longest answer line a client reads: tokens of a few KiB, a status report of many accounts.
    public static let answerLimit = 1 << 20

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `value` as one line, newline included.
    public static func line(_ value: some Encodable) throws -> [UInt8] {
        Array(try encoder().encode(value)) + [UInt8(ascii: "\n")]
    }
}

/// Why a line could not be read as the broker's protocol. Its description names what was not
/// understood and both versions, so the person knows which side to update.
public struct WireMismatch: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        /// Not one JSON object.
        case notJSON
        /// `v` missing, or another version than this side's.
        case version(Int?)
        /// None, or more than one, of the operations this side knows.
        case operation([String])
        /// A field this side's version does not have, in the object named `object`.
        case unknownField(String, object: String)
        /// A field of the right name whose value is not what this version sends.
        case malformedField(object: String, reason: String)
    }

    public var problem: Problem
    /// What the line was: "request" or "answer".
    public var kind: String

    public init(_ problem: Problem, kind: String) {
        self.problem = problem
        self.kind = kind
    }

    public var description: String {
        let here = "this side speaks version \(BrokerWire.version) of the broker's protocol"
        switch problem {
        case .notJSON:
            return "the \(kind) is not one JSON object of the broker's protocol (\(here))"
        case .version(let version?):
            return "the \(kind) is version \(version) of the broker's protocol and \(here): run the same Latchkey version on both sides"
        case .version(nil):
            return "the \(kind) names no version of the broker's protocol (\(here)): an older Latchkey? Run the same version on both sides"
        case .operation(let names) where names.isEmpty:
            return "the \(kind) names no operation of version \(BrokerWire.version) of the broker's protocol"
        case .operation(let names):
            let listed = names.map { "\"\(Self.inert($0))\"" }.joined(separator: ", ")
            return
                "the \(kind) names \(listed), which is not one operation of version \(BrokerWire.version) of the broker's protocol:"
                + " run the same Latchkey version on both sides"
        case .unknownField(let field, let object):
            return
                "the \(kind)'s \(object) has the field \"\(Self.inert(field))\", which version \(BrokerWire.version) of the broker's protocol does not have: run the same Latchkey version on both sides"
        case .malformedField(let object, let reason):
            return "the \(kind)'s \(object) cannot be read: \(reason)"
        }
    }

    /// A name from the other side, cut and made inert (it is shown in a terminal).
    static func inert(_ text: String) -> String {
        String(text.unicodeScalars.prefix(60).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}

/// A JSON value read only to check which fields a message has before it is decoded.
enum WireJSON: Decodable {
    case object([String: WireJSON])
    case other

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.singleValueContainer().decode([String: WireJSON].self) {
            self = .object(object)
        } else {
            self = .other
        }
    }

    var fields: [String: WireJSON]? {
        if case .object(let fields) = self { return fields }
        return nil
    }
}

/// A message object whose fields are checked against what this version has before it is decoded.
protocol WireObject: Codable {
    associatedtype CodingKeys: CodingKey, CaseIterable
    /// How errors name it: "token request", "client".
    static var wireName: String { get }
}

extension WireObject {
    static var fieldNames: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)) }

    /// The first field of `object` this version does not have.
    static func unknownField(in object: [String: WireJSON]) -> String? {
        object.keys.sorted().first { !fieldNames.contains($0) }
    }
}

/// Reads one line of the protocol: the version and the named object's fields checked first.
struct WireReader {
    let fields: [String: WireJSON]
    let bytes: [UInt8]
    let kind: String

    init(_ line: some Collection<UInt8>, kind: String) throws(WireMismatch) {
        bytes = Array(line)
        self.kind = kind
        guard let value = try? JSONDecoder().decode(WireJSON.self, from: Data(bytes)), let fields = value.fields else {
            throw WireMismatch(.notJSON, kind: kind)
        }
        self.fields = fields
        let version = try? JSONDecoder().decode(VersionOnly.self, from: Data(bytes)).v
        guard version == BrokerWire.version else { throw WireMismatch(.version(version), kind: kind) }
    }

    /// The one key of the message besides `v` and `shared`, which must be among `names`.
    func operation(among names: [String], besides shared: Set<String>) throws(WireMismatch) -> String {
        let named = fields.keys.filter { $0 != "v" && !shared.contains($0) }.sorted()
        guard named.count == 1, names.contains(named[0]) else { throw WireMismatch(.operation(named), kind: kind) }
        return named[0]
    }

    /// The object at `key`, its fields checked, decoded as `Object`.
    func object<Object: WireObject>(_ type: Object.Type, at key: String) throws(WireMismatch) -> Object {
        guard let object = fields[key]?.fields else {
            throw WireMismatch(.malformedField(object: Object.wireName, reason: "it is not an object"), kind: kind)
        }
        if let field = Object.unknownField(in: object) { throw WireMismatch(.unknownField(field, object: Object.wireName), kind: kind) }
        do {
            return try JSONDecoder().decode(Keyed<Object>.self, from: Data(bytes), configuration: key).value
        } catch {
            throw WireMismatch(.malformedField(object: Object.wireName, reason: Self.reason(error)), kind: kind)
        }
    }

    /// A plain value at `key`.
    func value<Value: Decodable>(_ type: Value.Type, at key: String) throws(WireMismatch) -> Value {
        do {
            return try JSONDecoder().decode(Keyed<Value>.self, from: Data(bytes), configuration: key).value
        } catch {
            throw WireMismatch(.malformedField(object: key, reason: Self.reason(error)), kind: kind)
        }
    }

    /// Which field was wrong, never its value (it may be a token).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "not the protocol's JSON" }
        switch error {
        case .keyNotFound(let key, _): return "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).filter { Int($0) == nil }.joined(separator: ".")
            return path.isEmpty ? "not the protocol's JSON" : "\"\(WireMismatch.inert(path))\" is not what the protocol sends there"
        @unknown default: return "not the protocol's JSON"
        }
    }
}

private struct VersionOnly: Decodable {
    var v: Int?
}

/// The value under one key of a message, decoded without knowing the message's other keys.
private struct Keyed<Value: Decodable>: DecodableWithConfiguration {
    var value: Value

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder, configuration key: String) throws {
        value = try decoder.container(keyedBy: Key.self).decode(Value.self, forKey: Key(stringValue: key))
    }
}
