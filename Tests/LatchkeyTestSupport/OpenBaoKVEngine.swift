import Foundation
public import LatchkeySupport
public import Synchronization

/// One KV version 2 engine at `secret`, in memory; `down` makes every request fail as an
/// unreachable node does, `refuseWrites` refuses writes below a path as a policy does.
/// `standby` is a standby's lagging copy of the accounts, as OpenBao 2.7's standbys answer
/// reads: from their own copy, unless the request carries an `X-Vault-Index` with
/// `X-Vault-Inconsistent: forward-active-node` (then the active node answers). Each write
/// answers with its index, as OpenBao's do.
public final class OpenBaoKVEngine: HTTPTransport {
    public init() {}

    public typealias Secrets = [String: (version: Int, data: [String: String]?)]
    public struct State {
        public var secrets: Secrets = [:]
        public var requests: [String] = []
        public var down = false
        public var refuseWrites: String?
        public var index = 0
        public var standby: Secrets?
        public var forwarded: [String] = []
    }
    public let state = Mutex(State())

    public func send(_ request: HTTPRequest) async throws(TransportError) -> HTTPResponse {
        try state.withLock { state throws(TransportError) in
            let path = request.url.path
            state.requests.append("\(request.method.rawValue) \(path)\(request.url.query.map { "?" + $0 } ?? "")")
            if state.down { throw .unreachable(host: "127.0.0.1:8200", reason: "Connection refused") }
            let toActive =
                request.header("X-Vault-Index") != nil && request.header("X-Vault-Inconsistent") == "forward-active-node"
            if toActive { state.forwarded.append(path) }
            let copy = !toActive && path.contains("/team/accounts") ? state.standby ?? state.secrets : state.secrets
            if path.hasPrefix("/v1/secret/metadata/"), request.url.query == "list=true" {
                let prefix = String(path.dropFirst("/v1/secret/metadata/".count)) + "/"
                let keys = copy.keys.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
                if keys.isEmpty { return Self.json(404, #"{"errors":[]}"#) }
                return Self.json(200, #"{"data":{"keys":\#(Self.encode(keys))}}"#)
            }
            let key = String(path.dropFirst("/v1/secret/data/".count))
            switch request.method {
            case .get:
                guard let secret = copy[key] else { return Self.json(404, #"{"errors":[]}"#) }
                let data = secret.data.map(Self.encode) ?? "null"
                return Self.json(
                    secret.data == nil ? 404 : 200,
                    #"{"data":{"data":\#(data),"metadata":{"created_time":"2026-11-26T21:00:00Z","deletion_time":"","destroyed":false,"version":\#(secret.version)}}}"#
                )
            case .post:
                if let refused = state.refuseWrites, key.hasPrefix(refused) {
                    return Self.json(403, #"{"errors":["1 error occurred:\n\t* permission denied\n\n"]}"#)
                }
                let body = try! JSONSerialization.jsonObject(with: Data(request.body ?? [])) as! [String: Any]
                let cas = (body["options"] as! [String: Any])["cas"] as! Int
                let current = state.secrets[key]?.version ?? 0
                guard cas == current else {
                    return Self.json(400, #"{"errors":["check-and-set parameter did not match the current version"]}"#)
                }
                state.secrets[key] = (current + 1, body["data"] as? [String: String])
                state.index += 1
                var answer = Self.json(200, #"{"data":{"created_time":"2026-11-26T21:00:00Z","version":\#(current + 1)}}"#)
                answer.headers.append(("X-Vault-Index", "index-\(state.index)"))
                return answer
            default:
                return Self.json(405, #"{"errors":["unsupported"]}"#)
            }
        }
    }

    public static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    public static func encode(_ value: some Encodable) -> String { String(decoding: try! JSONEncoder().encode(value), as: UTF8.self) }

    public var requests: [String] { state.withLock { $0.requests } }
    public func secret(_ key: String) -> (version: Int, data: [String: String]?)? { state.withLock { $0.secrets[key] } }
    public func put(_ key: String, _ data: [String: String]) {
        state.withLock { $0.secrets[key] = (($0.secrets[key]?.version ?? 0) + 1, data) }
    }
}
