import Foundation
import LatchkeyTUI
import LatchkeyVault

@testable import LatchkeyProviders

/// Providers and accounts for the pure tests: two providers like the end-to-end ones, fake tokens.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func provider(_ name: String, displayName: String? = nil) -> ProviderSummary {
        ProviderSummary(
            name: name, displayName: displayName ?? "IdP \(name.uppercased())", issuer: "http://127.0.0.1:8000/\(name)",
            redirectURITemplate: "http://127.0.0.1:PORT/oauth2redirect/\(name)", scopes: ["openid", "email"], signInSummary: "loopback")
    }

    static func account(
        _ provider: String, _ name: String, expiresIn: TimeInterval? = 3600, refreshToken: Bool = true, lastError: String? = nil
    ) -> AccountSummary {
        AccountSummary(
            id: AccountSummary.ID(provider: provider, issuer: "http://127.0.0.1:8000/\(provider)", subject: "sub-\(name)"),
            displayName: name, expiresAt: expiresIn.map { now.addingTimeInterval($0) }, scopes: ["openid", "email"],
            hasRefreshToken: refreshToken, lastError: lastError)
    }

    /// A firebase provider as the screen lists it; `firstFactor` names its `first_factor = "provider:NAME"`.
    static func firebase(_ name: String, firstFactor: String? = nil) -> ProviderSummary {
        let settings = FirebaseSettings(apiKey: "fake-key", projectID: "demo", firstFactor: firstFactor.map { .provider($0) } ?? .password)
        return ProviderSummary(Provider(name: name, displayName: "Emulated", kind: .firebase(settings), sourceFile: "/\(name).toml"))
    }

    /// A core provider for the interaction tests (no network is used).
    static let coreProvider = Provider(
        name: "fb", displayName: "Emulated", kind: .firebase(FirebaseSettings(apiKey: "fake-key", projectID: "demo")),
        sourceFile: "/fb.toml")

    /// A state on the list with providers a and b and the given accounts loaded.
    static func state(
        providers: [ProviderSummary] = [provider("a"), provider("b")], accounts: [AccountSummary] = [],
        size: TerminalSize = TerminalSize(rows: 24, columns: 80)
    ) -> AppState {
        var state = AppState(providers: providers, now: now, size: size)
        _ = state.handle(.accountsLoaded(accounts, backend: "vault"))
        return state
    }
}
