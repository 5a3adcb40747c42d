public import Foundation
import LoopbackHTTP

/// The emulator served over HTTP on a loopback port, startable in-process from tests.
///
/// Addressing follows the Firebase emulator: `http://127.0.0.1:PORT/identitytoolkit.googleapis.com/v1/...`,
/// `.../securetoken.googleapis.com/v1/token`, and the JWKS at
/// `.../www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`.
public final class IdentityToolkitEmulator: Sendable {
    public let state: IdentityToolkitState
    private let server: LoopbackHTTPServer

    private init(state: IdentityToolkitState, server: LoopbackHTTPServer) {
        self.state = state
        self.server = server
    }

    public var port: Int { server.port }

    /// Binds `host:port` (port 0: any free one) and serves until `shutdown()`; the codes sent are
    /// listed over HTTP only when `listsCodesOverHTTP` (see `IdentityToolkitState`).
    public static func start(
        configuration: EmulatorConfiguration, host: String = "127.0.0.1", port: Int = 0,
        clock: @escaping @Sendable () -> Date = { Date() }, log: @escaping @Sendable (String) -> Void = { _ in },
        listsCodesOverHTTP: Bool = false
    ) async throws -> IdentityToolkitEmulator {
        let state = try IdentityToolkitState(configuration: configuration, clock: clock, log: log, listsCodesOverHTTP: listsCodesOverHTTP)
        let server = try await LoopbackHTTPServer.serve(host: host, port: port, state.handle)
        return IdentityToolkitEmulator(state: state, server: server)
    }

    /// `http://127.0.0.1:PORT`
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// What a provider file's `identitytoolkit_url` points at.
    public var identityToolkitURL: URL { baseURL.appendingPathComponent("identitytoolkit.googleapis.com") }
    /// What a provider file's `securetoken_url` points at.
    public var secureTokenURL: URL { baseURL.appendingPathComponent("securetoken.googleapis.com") }
    /// What a provider file's `jwks_uri` points at.
    public var jwksURL: URL {
        URL(string: "http://127.0.0.1:\(port)/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com")!
    }

    public func shutdown() async {
        await server.close()
    }
}
