public import Foundation
import IdentityToolkitEmulator
import LoopbackHTTP

/// A small, standards-following OpenID provider on a loopback port, for `latchkey demo`:
/// discovery (with `authorization_response_iss_parameter_supported`), JWKS, an authorization
/// endpoint with a plain HTML login page, a token endpoint with PKCE, refresh-token rotation and
/// the device grant, revocation, userinfo and device authorization.
///
/// It shares only the HTTP server and the RS256 signer with the Identity Toolkit emulator, and
/// nothing with Latchkey's client code, so a mistake in the client is not mirrored here.
public final class DemoOpenIDProvider: Sendable {
    public let state: DemoOpenIDState
    private let server: LoopbackHTTPServer

    private init(state: DemoOpenIDState, server: LoopbackHTTPServer) {
        self.state = state
        self.server = server
    }

    /// Binds 127.0.0.1 on a free port and serves until `shutdown()`.
    public static func start(configuration: DemoOpenIDConfiguration, clock: @escaping @Sendable () -> Date = { Date() }) async throws
        -> DemoOpenIDProvider
    {
        let state = try DemoOpenIDState(configuration: configuration, clock: clock)
        let server = try await LoopbackHTTPServer.serve(host: "127.0.0.1", port: 0, maximumBodyBytes: 64 << 10) { state.handle($0) }
        state.issuer = "http://127.0.0.1:\(server.port)"
        return DemoOpenIDProvider(state: state, server: server)
    }

    /// `http://127.0.0.1:PORT`: what a provider file's `issuer` is.
    public var issuer: String { state.issuer }

    public func shutdown() async {
        await server.close()
    }
}
