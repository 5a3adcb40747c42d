public import Foundation
import LatchkeyEssentials
public import LatchkeySupport
import LatchkeyVault
import Synchronization

/// Where `MCPProxy` gets the headers that authorize its requests: the account's token, as
/// `latchkey token` gets it, and a DPoP proof for a bound one.
public protocol MCPProxyCredentials: Sendable {
    /// The `Authorization` header (and `DPoP`, RFC 9449 §7.1) for `method` `url`. `refused`,
    /// the headers this gave for a request the server just refused (a 401), asks for another
    /// token than theirs: a refresh. `nonce` is the server's `DPoP-Nonce`, when it sent one.
    func authorization(method: String, url: URL, refused: [(String, String)]?, nonce: String?) async throws -> [(String, String)]

    /// Signs the account in again asking for `scopes` as well as its own (a 403 with
    /// `insufficient_scope`, RFC 6750 §3.1).
    func signInAgain(adding scopes: [String]) async throws
}

/// `latchkey mcp proxy`: a stdio MCP server (one JSON-RPC message a line) that forwards every
/// message to a remote server over Streamable HTTP (the MCP specification, "Transports") and
/// writes back what the server answers, SSE events as they arrive, with the account's token on
/// every request. `MCPProxySession` keeps the rules; this is the network around it.
public final class MCPProxy: Sendable {
    /// The most bytes one message from the server, or one SSE line, may hold.
    public static let messageLimit = 8 << 20
    /// How much of a refusal's body is read, to say why.
    static let refusalLimit = 4 << 10

    let url: URL
    let credentials: any MCPProxyCredentials
    /// Writes one line (a newline follows) to the client.
    let write: @Sendable ([UInt8]) -> Void
    /// Says something to the person (standard error); the text is sanitised already.
    let log: @Sendable (String) -> Void
    private let transport: any StreamingHTTPTransport

    private struct State {
        var session = MCPProxySession()
        var dpopNonce: String?
        var failure: MCPProxyError?
    }
    private let state = Mutex(State())
    private let failures: AsyncStream<MCPProxyError>
    private let failed: AsyncStream<MCPProxyError>.Continuation
    /// Yields once the client's `notifications/initialized` is taken: the server's own stream
    /// may be opened from then on.
    private let initialized: AsyncStream<Void>
    private let ready: AsyncStream<Void>.Continuation

    public init(
        url: URL, credentials: any MCPProxyCredentials, transport: any StreamingHTTPTransport = LiveHTTPTransport(),
        write: @escaping @Sendable ([UInt8]) -> Void, log: @escaping @Sendable (String) -> Void
    ) {
        self.url = url
        self.transport = transport
        self.credentials = credentials
        self.write = write
        self.log = log
        (failures, failed) = AsyncStream.makeStream(of: MCPProxyError.self)
        (initialized, ready) = AsyncStream.makeStream(of: Void.self)
    }

    /// Forwards each of `lines` (the client's messages) until they end and every answer is in,
    /// then ends the session (DELETE, §"Session Management"); `nil` then. Meanwhile what the
    /// server sends on its own stream is passed on too. When the server is gone or answers
    /// garbage, every waiting request is answered with a JSON-RPC error and that failure is
    /// returned at once, whatever is still in flight.
    public func run(_ lines: AsyncStream<[UInt8]>) async -> MCPProxyError? {
        enum Ending: Sendable {
            case inputEnded, listened
            case failed(MCPProxyError)
        }
        let failure = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { forwarding in
                    for await line in lines where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                        forwarding.addTask { await self.forward(line) }
                    }
                    // Input ended, output may still be read (`printf ... | latchkey mcp proxy`):
                    // the requests in flight are answered first. A client that will not wait
                    // ends the proxy with a signal (the SDKs' stdio clients send SIGTERM).
                }
                return .inputEnded
            }
            group.addTask {
                for await failure in self.failures { return .failed(failure) }
                return .inputEnded
            }
            group.addTask {
                for await _ in self.initialized {
                    await self.listen()
                    break
                }
                return .listened
            }
            var failure: MCPProxyError?
            // The server's stream ending changes nothing; input ending or a failure ends the proxy.
            while let ending = await group.next() {
                if case .listened = ending { continue }
                if case .failed(let error) = ending { failure = error }
                break
            }
            group.cancelAll()
            return failure
        }
        if failure == nil { await endSession() }
        return failure
    }

    // MARK: - One message

    private func forward(_ line: [UInt8]) async {
        guard let message = JSONRPCMessage(line) else {
            emit([
                JSONRPCMessage.error(
                    answering: nil, code: JSONRPCMessage.parseError, message: "latchkey mcp proxy: not a JSON-RPC 2.0 message")
            ])
            return
        }
        let failure = state.withLock { state in
            state.session.sending(message)
            return state.failure
        }
        if let failure {
            return emit(state.withLock { $0.session.abandon(message.requestIDs, reason: failure.description) })
        }
        do {
            try await post(message)
        } catch let failure as MCPProxyError {
            fail(failure)
        } catch is CancellationError {
            return
        } catch {
            fail(.noToken(reason: (error as? any LatchkeyError)?.description ?? String(describing: error)))
        }
    }

    /// POSTs `message` and passes on the answer; after a 401 once more with a new token, after
    /// a 403 for more scope once more after a sign-in asking for it.
    private func post(_ message: JSONRPCMessage) async throws {
        var refused: [(String, String)]?
        var nonceRetried = false
        var steppedUp = false
        while true {
            let nonce = state.withLock { $0.dpopNonce }
            let authorization: [(String, String)]
            do {
                authorization = try await credentials.authorization(method: "POST", url: url, refused: refused, nonce: nonce)
            } catch  where refused != nil {
                // The server refused the token and the broker gives no other now (it refreshed
                // the account moments ago): this request is answered, the proxy goes on.
                try Task.checkCancellation()
                let reason = (error as? any LatchkeyError)?.description ?? String(describing: error)
                refuse(message, "the MCP server refused the token (HTTP 401), and no new one is given: \(reason)")
                return
            }
            let headers = state.withLock { $0.session.postHeaders(authorization: authorization, for: message) }
            let answer = Answer(message: message)
            do {
                _ = try await transport.stream(HTTPRequest(method: .post, url: url, headers: headers, body: message.line)) { part in
                    self.receive(part, into: answer)
                }
            } catch {
                try Task.checkCancellation()
                throw answer.problem ?? .serverGone(server: url.absoluteString, reason: error.description)
            }
            if let problem = answer.problem { throw problem }
            switch answer.reply {
            case .json:
                guard let received = JSONRPCMessage(answer.body) else {
                    throw MCPProxyError.garbage(server: url.absoluteString, reason: "its JSON answer is no JSON-RPC message")
                }
                deliver(received)
                unanswered(message, "the server's answer did not answer this request")
            case .eventStream:
                unanswered(message, "the server ended its event stream without answering this request")
            case .accepted, nil:
                unanswered(message, "the server took the request without answering it")
                if message.kinds.contains(.notification(method: "notifications/initialized")) {
                    ready.yield()
                    ready.finish()
                }
            case .unauthorized(let fresh?) where fresh != nonce && !nonceRetried:
                // The server wants its nonce in the proof (RFC 9449 §9): the token is not at fault.
                nonceRetried = true
                continue
            case .unauthorized where refused == nil:
                refused = authorization
                log("the MCP server refused the token; asking for a new one")
                continue
            case .unauthorized:
                refuse(message, "the MCP server refused a new token too (HTTP 401); sign in again with `latchkey login`")
            case .insufficientScope(let scopes) where !steppedUp:
                steppedUp = true
                log("the MCP server asks for more scope (\(scopes.joined(separator: " "))); signing in again")
                do {
                    try await credentials.signInAgain(adding: scopes)
                } catch {
                    // This request cannot be had; the others may need no more than the token has.
                    try Task.checkCancellation()
                    let reason = (error as? any LatchkeyError)?.description ?? String(describing: error)
                    refuse(message, "the sign-in for \(scopes.joined(separator: " ")) failed: \(reason)")
                    return
                }
                continue
            case .insufficientScope(let scopes):
                refuse(message, "the MCP server still asks for \(scopes.joined(separator: " ")) after a sign-in asking for it (HTTP 403)")
            case .sessionEnded:
                throw MCPProxyError.sessionEnded(server: url.absoluteString)
            case .refused(let status):
                let detail = String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                refuse(message, "the MCP server answered HTTP \(status)" + (detail.isEmpty ? "" : ": " + detail))
            case .garbage(let reason):
                throw MCPProxyError.garbage(server: url.absoluteString, reason: reason)
            }
            return
        }
    }

    /// One piece of the server's answer, on the transfer's thread; `false` ends the transfer.
    private func receive(_ part: HTTPResponsePart, into answer: Answer) -> Bool {
        switch part {
        case .head(let status, let headers):
            answer.reply = state.withLock { state in
                // A server may give its next DPoP nonce with any answer (RFC 9449 §8.2).
                state.dpopNonce = MCPProxySession.header("DPoP-Nonce", in: headers) ?? state.dpopNonce
                return answer.message.map { state.session.reply(to: $0, status: status, headers: headers) }
                    ?? MCPProxySession.serverStreamReply(status: status, headers: headers)
            }
            return true
        case .body(let bytes):
            switch answer.reply {
            case .eventStream:
                do {
                    for event in try answer.events.feed(bytes) where event.type == "message" {
                        guard let message = JSONRPCMessage(Array(event.data.utf8)) else {
                            answer.problem = .garbage(server: url.absoluteString, reason: "an event of its stream is no JSON-RPC message")
                            return false
                        }
                        deliver(message)
                        answer.delivered += 1
                    }
                    return true
                } catch {
                    answer.problem = .garbage(
                        server: url.absoluteString, reason: "a line of its event stream is over \(error.limit / 1024) KiB")
                    return false
                }
            case .json:
                guard answer.body.count + bytes.count <= Self.messageLimit else {
                    answer.problem = .garbage(server: url.absoluteString, reason: "its answer is over \(Self.messageLimit / 1024) KiB")
                    return false
                }
                answer.body += bytes
                return true
            default:
                // A refusal's body says why, in its first few KiB; the rest is not kept.
                answer.body += bytes.prefix(max(0, Self.refusalLimit - answer.body.count))
                return true
            }
        }
    }

    /// The server's answer to one POST as it arrives. Used by one transfer's thread while it
    /// runs, then by the task that started it once it is over: never by two at once.
    private final class Answer: @unchecked Sendable {
        /// The client's message the answer is to; `nil` for the server's own stream.
        let message: JSONRPCMessage?
        var reply: MCPProxySession.Reply?
        /// How many messages it passed on.
        var delivered = 0
        var body: [UInt8] = []
        var events = ServerSentEventParser(limit: MCPProxy.messageLimit)
        var problem: MCPProxyError?

        init(message: JSONRPCMessage?) { self.message = message }
    }

    // MARK: - The server's own stream

    /// The server's own stream (GET, §"Listening for Messages from the Server"): the requests
    /// and notifications it sends outside any request of the client's, passed on like the rest.
    /// A server without one (405, or no event stream) is left alone; a stream the server ends is
    /// opened again a second later, until three in a row end with nothing said; a broken
    /// connection or a bad stream is a server gone or garbage, as on a POST.
    private func listen() async {
        var refused: [(String, String)]?
        var sent: [(String, String)] = []
        var quiet = 0
        while !Task.isCancelled && quiet < 3 {
            let answer = Answer(message: nil)
            do {
                let nonce = state.withLock { $0.dpopNonce }
                let authorization = try await credentials.authorization(method: "GET", url: url, refused: refused, nonce: nonce)
                sent = authorization
                let headers = state.withLock { [("Accept", "text/event-stream")] + $0.session.sessionHeaders(authorization: authorization) }
                _ = try await transport.stream(HTTPRequest(method: .get, url: url, headers: headers)) { part in
                    self.receive(part, into: answer)
                }
            } catch let error as TransportError {
                if !Task.isCancelled { fail(answer.problem ?? .serverGone(server: url.absoluteString, reason: error.description)) }
                return
            } catch {
                return
            }
            if let problem = answer.problem { return fail(problem) }
            switch answer.reply {
            case .eventStream:
                quiet = answer.delivered > 0 ? 0 : quiet + 1
                try? await Task.sleep(for: .seconds(1))
            case .unauthorized where refused == nil:
                refused = sent
            default:
                return
            }
        }
    }

    // MARK: - Lines to the client

    /// Passes `message` on to the client; under the lock, so lines never interleave and a
    /// request is answered once.
    private func deliver(_ message: JSONRPCMessage) {
        state.withLock { state in
            state.session.received(message)
            write(message.line)
        }
    }

    private func emit(_ lines: [[UInt8]]) {
        state.withLock { _ in lines.forEach(write) }
    }

    /// Answers those of `message`'s requests the server left unanswered.
    private func unanswered(_ message: JSONRPCMessage, _ reason: String) {
        state.withLock { state in state.session.abandon(message.requestIDs, reason: reason).forEach(write) }
    }

    /// `unanswered`, and said on standard error too when the message asked for no answer.
    private func refuse(_ message: JSONRPCMessage, _ reason: String) {
        if message.requestIDs.isEmpty { log(TerminalText.sanitized(reason, maxLength: 500)) }
        unanswered(message, reason)
    }

    /// Ends the proxy: every waiting request is answered with `failure`, then `run` returns it.
    private func fail(_ failure: MCPProxyError) {
        let first = state.withLock { state in
            guard state.failure == nil else { return false }
            state.failure = failure
            state.session.abandon(nil, reason: failure.description).forEach(write)
            return true
        }
        if first { failed.yield(failure) }
    }

    // MARK: - The end

    /// DELETE with the session's ID (§"Session Management"), when the server gave one; a
    /// server that refuses (405) or is gone changes nothing, the proxy ends anyway.
    private func endSession() async {
        guard state.withLock({ $0.session.sessionID }) != nil else { return }
        do {
            let nonce = state.withLock { $0.dpopNonce }
            let authorization = try await credentials.authorization(method: "DELETE", url: url, refused: nil, nonce: nonce)
            let headers = state.withLock { $0.session.sessionHeaders(authorization: authorization) }
            _ = try await transport.send(HTTPRequest(method: .delete, url: url, headers: headers), within: .seconds(5))
        } catch {
            log("the session was not ended at the server: \((error as? any LatchkeyError)?.description ?? String(describing: error))")
        }
    }
}
