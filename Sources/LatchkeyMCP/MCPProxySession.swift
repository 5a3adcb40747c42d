import Foundation
import FoundationEssentials
import LatchkeyEssentials
import LatchkeyOAuth

/// The rules of one Streamable HTTP session as `latchkey mcp proxy` keeps it (the MCP
/// specification, "Transports", revision 2025-06-18 §"Streamable HTTP"), without the network:
/// which headers a POST carries, what the server's answer to it is, which requests still wait for
/// an answer, and the JSON-RPC errors that answer them when the server will not.
public struct MCPProxySession: Sendable {
    /// How the server answered one POST, read from its status and headers.
    public enum Reply: Sendable, Equatable {
        /// 202: a notification or response taken; nothing to pass on.
        case accepted
        /// One JSON message (or batch) in the body.
        case json
        /// An SSE stream of messages (`text/event-stream`), passed on event by event.
        case eventStream
        /// 401: the token was refused; a new one may do. `dpopNonce` is the server's `DPoP-Nonce`
        /// (RFC 9449 §9) when it sent one.
        case unauthorized(dpopNonce: String?)
        /// 403 with `error="insufficient_scope"` (RFC 6750 §3.1): the scopes its `scope` names.
        case insufficientScope([String])
        /// 404 to a request carrying a session ID: the server ended the session.
        case sessionEnded
        /// Another status: the server would not take the message.
        case refused(status: Int)
        /// A success that is no message the transport allows; the reason, sanitised.
        case garbage(String)
    }

    /// `Mcp-Session-Id`, as the server's answer to `initialize` gave it.
    public private(set) var sessionID: String?
    /// The protocol version the `initialize` answer negotiated, sent as `MCP-Protocol-Version`.
    public private(set) var protocolVersion: String?
    /// `initialize` requests not yet answered: the answer's session ID and version are kept.
    private var initializing: Set<JSONRPCMessage.ID> = []
    /// Requests forwarded and not yet answered.
    private var pending: Set<JSONRPCMessage.ID> = []

    public init() {}

    /// The headers of a POST carrying a client's `message` (§"Sending Messages to the Server"),
    /// with `authorization` (the account's `Authorization`, and `DPoP` for a bound token), and
    /// the standard headers that mirror a request for the intermediaries between (SEP-2243):
    /// `Mcp-Method`, and `Mcp-Name` for the methods that name a tool, resource or prompt.
    public func postHeaders(authorization: [(String, String)], for message: JSONRPCMessage) -> [(String, String)] {
        var mirrored: [(String, String)] = []
        if message.kinds.count == 1, case .request(_, let method) = message.kinds[0] {
            mirrored.append(("Mcp-Method", Self.headerValue(method)))
            if Self.namingMethods.contains(method), let name = message.paramsName {
                mirrored.append(("Mcp-Name", Self.headerValue(name)))
            }
        }
        return [("Accept", "application/json, text/event-stream"), ("Content-Type", "application/json")] + mirrored
            + sessionHeaders(authorization: authorization)
    }

    /// The methods whose `Mcp-Name` is required (SEP-2243): the tool, resource or prompt named.
    static let namingMethods: Set<String> = ["tools/call", "resources/read", "prompts/get"]

    /// `text` as a header value: as it is when it is printable ASCII without space at either end,
    /// else (and whenever it could be read as one) in SEP-2243's Base64 sentinel,
    /// `=?base64?…?=` over its UTF-8, so no name can split a header or lose a character.
    static func headerValue(_ text: String) -> String {
        let bytes = Array(text.utf8)
        let plain =
            bytes.allSatisfy { (0x20...0x7E).contains($0) } && bytes.first != 0x20 && bytes.last != 0x20
            && !text.hasPrefix("=?base64?")
        return plain ? text : "=?base64?" + Data(bytes).base64EncodedString() + "?="
    }

    /// The headers every request of the session carries (the DELETE that ends it too).
    public func sessionHeaders(authorization: [(String, String)]) -> [(String, String)] {
        authorization + (sessionID.map { [("Mcp-Session-Id", $0)] } ?? [])
            + (protocolVersion.map { [("MCP-Protocol-Version", $0)] } ?? [])
    }

    /// Notes a client's message about to be sent: its requests now wait for answers.
    public mutating func sending(_ message: JSONRPCMessage) {
        for kind in message.kinds {
            guard case .request(let id, let method) = kind else { continue }
            pending.insert(id)
            if method == "initialize" { initializing.insert(id) }
        }
    }

    /// What the server's answer to the POST of `message` is, from its status and headers; the
    /// session ID of an answer to `initialize` is kept.
    public mutating func reply(to message: JSONRPCMessage, status: Int, headers: [(String, String)]) -> Reply {
        func header(_ name: String) -> String? { Self.header(name, in: headers) }
        switch status {
        case 200..<300:
            if message.requestIDs.contains(where: initializing.contains), let id = header("Mcp-Session-Id") {
                // Visible ASCII only (§"Session Management"): it goes back in a header line.
                guard !id.isEmpty, id.utf8.count <= 1024, id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                    return .garbage("its Mcp-Session-Id is not visible ASCII")
                }
                sessionID = id
            }
            let type = Self.mediaType(in: headers)
            switch type {
            // 202 has no body whatever its Content-Type says (the SDK's server sends one).
            case _ where status == 202: return .accepted
            case "application/json": return .json
            case "text/event-stream": return .eventStream
            case _ where message.requestIDs.isEmpty && (type ?? "").isEmpty: return .accepted
            default: return .garbage("it answered with \(TerminalText.sanitized(type ?? "no Content-Type", maxLength: 80))")
            }
        case 401:
            return .unauthorized(dpopNonce: header("DPoP-Nonce"))
        case 403:
            let challenge = BearerChallenge.find(
                in: headers.filter { $0.0.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame }.map(\.1))
            guard challenge?.parameters["error"] == "insufficient_scope", let scope = challenge?.scope else {
                return .refused(status: status)
            }
            let scopes = scope.split(separator: " ").map(String.init)
            // RFC 6749 §3.3 scope-tokens only: they become a sign-in's `scope` parameter.
            guard !scopes.isEmpty, scopes.allSatisfy(ScopeToken.isValid) else { return .refused(status: status) }
            return .insufficientScope(scopes)
        case 404 where sessionID != nil:
            return .sessionEnded
        default:
            return .refused(status: status)
        }
    }

    /// What the server's answer to the GET that opens its own stream is: an event stream, a 401,
    /// or anything else, which means it offers none (405 is the spec's way to say so).
    public static func serverStreamReply(status: Int, headers: [(String, String)]) -> Reply {
        let type = mediaType(in: headers)
        switch status {
        case 200 where type == "text/event-stream": return .eventStream
        case 401: return .unauthorized(dpopNonce: header("DPoP-Nonce", in: headers))
        default: return .refused(status: status)
        }
    }

    /// The last `name` header's value (names are case-insensitive, RFC 9110 §5.1).
    static func header(_ name: String, in headers: [(String, String)]) -> String? {
        headers.last { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }

    /// `Content-Type`'s media type, lowercased, without parameters.
    static func mediaType(in headers: [(String, String)]) -> String? {
        header("Content-Type", in: headers)?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Notes a message from the server that is about to be passed on: a response answers its
    /// request, and the answer to `initialize` says the protocol version to send from now on.
    public mutating func received(_ message: JSONRPCMessage) {
        for kind in message.kinds {
            guard case .response(let id?) = kind else { continue }
            pending.remove(id)
            if initializing.remove(id) != nil, let version = message.protocolVersion,
                !version.isEmpty, version.utf8.count <= 64, version.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            {
                protocolVersion = version
            }
        }
    }

    /// The JSON-RPC errors answering those of `ids` still waiting (every waiting request when
    /// `ids` is `nil`), which then wait no more: a request is answered once, by the server or here.
    public mutating func abandon(_ ids: [JSONRPCMessage.ID]?, reason: String) -> [[UInt8]] {
        let waiting = ids.map { $0.filter(pending.contains) } ?? pending.sorted { $0.json < $1.json }
        return waiting.compactMap { id in
            guard pending.remove(id) != nil else { return nil }
            initializing.remove(id)
            return JSONRPCMessage.error(
                answering: id, code: JSONRPCMessage.serverError,
                message: "latchkey mcp proxy: " + TerminalText.sanitized(reason, maxLength: 500))
        }
    }
}
