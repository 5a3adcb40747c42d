public import Foundation
import LatchkeyProviders
public import LatchkeySupport
public import LatchkeyVault

/// OpenBao's HTTP API (Vault's: `/v1/…`, the token in `X-Vault-Token`, errors as
/// `{"errors": […]}`) at the addresses of one cluster.
///
/// A request goes to the first address that answers: one that cannot be reached, that answers
/// 503 (sealed, or not yet ready), or 307 (a standby that cannot reach the active node, which
/// it would otherwise forward to) is passed over for the next, since a standby node forwards to
/// the active one and any node serves. Every other answer, a refusal included, is the
/// cluster's and is final, except that a KV engine still upgrading is asked again for a while.
public struct OpenBaoClient: Sendable {
    /// The nodes' API addresses, in the order they are tried.
    public let addresses: [URL]
    let transport: any HTTPTransport
    /// Waits between asking an upgrading KV engine again (tests pass one that takes no time).
    let pause: @Sendable (Duration) async -> Void

    public init(
        addresses: [URL], transport: any HTTPTransport,
        pause: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }
    ) {
        self.addresses = addresses
        self.transport = transport
        self.pause = pause
    }

    // MARK: - Addresses

    /// The address `latchkey openbao-token` talks to for an account of `provider`: `option`
    /// (`--address`), else `configured` (the provider file's `openbao_address`, checked when the
    /// file was read), else `BAO_ADDR`, else `VAULT_ADDR` (the names OpenBao's and Vault's own
    /// clients read), checked as every endpoint is (https, or http to loopback).
    public static func address(
        option: String?, configured: URL?, environment: [String: String], provider: String
    ) throws(OpenBaoError) -> URL {
        if let option { return try OpenBaoError.naming { () throws(OpenBaoNameError) in try OpenBaoNames.address(option) } }
        if let configured { return configured }
        guard let raw = ["BAO_ADDR", "VAULT_ADDR"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) else {
            throw .noAddress(provider: provider)
        }
        return try OpenBaoError.naming { () throws(OpenBaoNameError) in try OpenBaoNames.address(raw) }
    }

    // MARK: - Logins

    /// Logs in at the JWT auth method mounted at `mount` (`POST /v1/auth/MOUNT/login` with
    /// `role` and `jwt`) and returns the client token (`auth.client_token`).
    public func login(jwt: Secret, role: String, mount: String) async throws(OpenBaoError) -> Secret {
        try await login(at: mount, ["role": role, "jwt": jwt.exposedValue], action: "the JWT login at auth/\(mount)")
    }

    /// Logs in at the AppRole auth method mounted at `mount` (`POST /v1/auth/MOUNT/login` with
    /// `role_id` and `secret_id`), as a runner does, and returns the client token.
    public func login(roleID: String, secretID: Secret, mount: String = "approle") async throws(OpenBaoError) -> Secret {
        try await login(at: mount, ["role_id": roleID, "secret_id": secretID.exposedValue], action: "the AppRole login at auth/\(mount)")
    }

    /// Every auth method answers a login alike: `auth.client_token`, checked as a token.
    private func login(at mount: String, _ fields: [String: String], action: String) async throws(OpenBaoError) -> Secret {
        // Encoding strings cannot fail.
        let body = Array(try! JSONEncoder().encode(fields))
        let (host, response) = try await send(.post, "auth/\(mount)/login", body: body, token: nil)
        let answer = try Self.answer(response, host: host, action: action)
        guard case .object(let auth)? = answer["auth"] else {
            throw .malformedAnswer(action: action, host: host, problem: "no auth object")
        }
        guard case .string(let token)? = auth["client_token"], !token.isEmpty else {
            throw .malformedAnswer(action: action, host: host, problem: "auth.client_token is missing or not a string")
        }
        if let problem = TokenText.problem(token, member: "auth.client_token") {
            throw .malformedAnswer(action: action, host: host, problem: problem)
        }
        return Secret(token)
    }

    // MARK: - Requests

    /// How often, and for how long in all, a KV engine that is still upgrading is asked again.
    static let upgradeRetry: Duration = .milliseconds(250)
    static let upgradeWait: Duration = .seconds(10)

    /// Sends one request to `path` (below `/v1/`) at the first address that answers, and returns
    /// that address's `host:port` and its response, for `answer` or a caller's own reading.
    ///
    /// A KV version 2 engine just enabled refuses every request with 400 "Upgrading from
    /// non-versioned to versioned data" (a standby: "Waiting for the primary to upgrade…") until
    /// it has written its first metadata, a moment later; the request is sent again every
    /// `upgradeRetry` for up to `upgradeWait`, then that refusal is the answer. It refused the
    /// request without doing any of it, so sending a write again is safe.
    func send(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8]?, token: Secret?, after index: StorageIndex? = nil
    ) async throws(OpenBaoError) -> (host: String, response: HTTPResponse) {
        var waited: Duration = .zero
        while true {
            let (host, response) = try await sendOnce(method, path, body: body, token: token, after: index)
            guard Self.isUpgrading(response), waited < Self.upgradeWait else { return (host, response) }
            await pause(Self.upgradeRetry)
            waited += Self.upgradeRetry
        }
    }

    /// `send` without the wait for an upgrading engine: the addresses in order.
    private func sendOnce(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8]?, token: Secret?, after index: StorageIndex?
    ) async throws(OpenBaoError) -> (host: String, response: HTTPResponse) {
        var tried: [String] = []
        var sealed: [String] = []
        for address in addresses {
            let base = address.absoluteString.hasSuffix("/") ? String(address.absoluteString.dropLast()) : address.absoluteString
            let url = URL(string: base + "/v1/" + path)!
            var headers = [("Accept", "application/json")]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            if let token { headers.append(("X-Vault-Token", token.exposedValue)) }
            headers += index?.headers ?? []
            let host = Self.hostAndPort(of: url)
            let response: HTTPResponse
            do {
                response = try await transport.send(HTTPRequest(method: method, url: url, headers: headers, body: body))
            } catch {
                guard error.category == .unavailable else { throw .unreachable(tried: tried + ["\(host): \(error.description)"]) }
                tried.append("\(host): \(error.description)")
                continue
            }
            switch response.status {
            case 503 where Self.errors(in: response).contains("Vault is sealed"):
                sealed.append(host)
                tried.append("\(host): sealed")
            case 503:
                tried.append("\(host): HTTP 503 (sealed or not ready)")
            case 307:
                // A standby that cannot forward to the active node (gone, or not yet elected)
                // redirects to it instead; redirects are never followed, and another node may
                // know the new active one.
                tried.append("\(host): HTTP 307 (a standby that cannot reach the active node)")
            default:
                return (host, response)
            }
        }
        if !sealed.isEmpty && sealed.count == tried.count { throw .sealed(hosts: sealed) }
        throw .unreachable(tried: tried.isEmpty ? ["no address"] : tried)
    }

    /// OpenBao's `errors` strings in `response`, none when it holds no such list.
    static func errors(in response: HTTPResponse) -> [String] {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body)),
            case .array(let items)? = object["errors"]
        else { return [] }
        return items.compactMap { item in
            if case .string(let text) = item { return text }
            return nil
        }
    }

    /// Whether `response` is a new KV version 2 engine's refusal while it upgrades its storage
    /// (the active node's words and a standby's both say "from non-versioned to versioned data").
    static func isUpgrading(_ response: HTTPResponse) -> Bool {
        response.status == 400 && errors(in: response).contains { $0.contains("from non-versioned to versioned data") }
    }

    /// The JSON object of a 2xx answer, or OpenBao's refusal (`{"errors": [strings]}`), or why
    /// the answer is neither; a 5xx without OpenBao's errors is a proxy's and says try again.
    static func answer(_ response: HTTPResponse, host: String, action: String) throws(OpenBaoError) -> [String: JSONValue] {
        let json = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body))
        let object: [String: JSONValue]?
        if case .object(let value)? = json { object = value } else { object = nil }
        if (200..<300).contains(response.status) {
            guard let object else {
                throw .malformedAnswer(action: action, host: host, problem: json == nil ? "not JSON" : "not a JSON object")
            }
            return object
        }
        guard case .array(let items)? = object?["errors"] else {
            if response.status >= 500 { throw .unavailable(host: host, status: response.status) }
            throw .malformedAnswer(action: action, host: host, problem: "HTTP \(response.status) without OpenBao's errors list")
        }
        let errors = items.compactMap { item -> String? in
            if case .string(let text) = item { return text }
            return nil
        }
        guard errors.count == items.count else {
            throw .malformedAnswer(action: action, host: host, problem: "HTTP \(response.status) with errors that are not strings")
        }
        throw .refused(action: action, host: host, status: response.status, errors: errors)
    }

    /// `host:port` of `url`, for messages.
    static func hostAndPort(of url: URL) -> String {
        guard let host = url.host else { return url.absoluteString }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
