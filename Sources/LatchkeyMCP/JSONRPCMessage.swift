import Foundation

/// What the proxy needs to know of one JSON-RPC 2.0 message (JSON-RPC 2.0 §4, §5) to route it:
/// its `id`, whether it asks (`method`) or answers (`result`/`error`), and the bytes to pass on.
/// The rest of the message is passed on as it is, never re-encoded.
public struct JSONRPCMessage: Sendable, Equatable {
    /// A request's `id` (§4): a string or a number, kept as the JSON text that wrote it so an
    /// error made for it names it exactly as the client did.
    public enum ID: Hashable, Sendable, Decodable {
        case string(String)
        case number(String)

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .string(text)
            } else if let whole = try? container.decode(Int64.self) {
                self = .number(String(whole))
            } else {
                self = .number(String(try container.decode(Double.self)))
            }
        }

        /// The id as JSON.
        var json: String {
            switch self {
            case .string(let text): return JSONRPCMessage.quoted(text)
            case .number(let text): return text
            }
        }
    }

    public enum Kind: Sendable, Equatable {
        /// Asks for an answer with this `id`.
        case request(ID, method: String)
        /// Asks for nothing back.
        case notification(method: String)
        /// Answers the request with this `id` (`null` for an error about a message that could
        /// not be read).
        case response(ID?)
    }

    /// The kind of each message the text holds: one, or each of a batch (JSON-RPC 2.0 §6).
    public var kinds: [Kind]
    /// The message as one line: the JSON it was, with the CR and LF between its tokens made
    /// spaces (JSON forbids both inside strings, so nothing the message says changes).
    public var line: [UInt8]
    /// `result.protocolVersion` of a response (the MCP `initialize` answer), if it is a string.
    public var protocolVersion: String?
    /// What a message that is not a batch names in its `params`: `name` (a tool's, a prompt's) or `uri` (a
    /// resource's), when it is a string; mirrored in the `Mcp-Name` header.
    public var paramsName: String?

    /// The message `bytes` hold; `nil` when they are not a JSON-RPC message or batch.
    public init?(_ bytes: some Collection<UInt8>) {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        if let one = try? decoder.decode(Envelope.self, from: data), let kind = one.kind {
            kinds = [kind]
            protocolVersion = one.protocolVersion
            paramsName = one.paramsName
        } else if let batch = try? decoder.decode([Envelope].self, from: data), !batch.isEmpty {
            let found = batch.compactMap(\.kind)
            guard found.count == batch.count else { return nil }
            kinds = found
        } else {
            return nil
        }
        line = bytes.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
    }

    /// The ids of the requests among the messages.
    public var requestIDs: [ID] {
        kinds.compactMap { if case .request(let id, _) = $0 { return id } else { return nil } }
    }

    /// The JSON-RPC error answering `id` (§5.1), as one line: the proxy's own answer to a
    /// request the server will not answer.
    public static func error(answering id: ID?, code: Int, message: String) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","id":\#(id?.json ?? "null"),"error":{"code":\#(code),"message":\#(quoted(message))}}"#.utf8)
    }

    /// JSON-RPC 2.0 §5.1: "Invalid JSON was received by the server".
    public static let parseError = -32700
    /// The implementation-defined server-error range (§5.1): the server could not be reached, or
    /// answered in a way the proxy could not pass on.
    public static let serverError = -32000

    static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: (try? encoder.encode(text)) ?? Data(#""""#.utf8), as: UTF8.self)
    }

    /// The members routing needs; the rest is not read.
    private struct Envelope: Decodable {
        var kind: Kind?
        var protocolVersion: String?
        var paramsName: String?

        private enum CodingKeys: String, CodingKey { case jsonrpc, id, method, params, result, error }
        private struct Result: Decodable { var protocolVersion: String? }
        private struct Params: Decodable {
            var name: String?
            var uri: String?
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard try container.decodeIfPresent(String.self, forKey: .jsonrpc) == "2.0" else { return }
            let id = try container.decodeIfPresent(ID.self, forKey: .id)
            if let method = try container.decodeIfPresent(String.self, forKey: .method) {
                kind = id.map { .request($0, method: method) } ?? .notification(method: method)
                // `params` may be anything (an array, names of another type): only strings are read.
                let params = try? container.decodeIfPresent(Params.self, forKey: .params)
                paramsName = params?.name ?? params?.uri
            } else if container.contains(.result) || container.contains(.error) {
                kind = .response(id)
                protocolVersion = (try? container.decodeIfPresent(Result.self, forKey: .result))?.protocolVersion
            }
        }
    }
}
