import ArgumentParser
import Foundation
import LatchkeyBroker
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeyVault

/// What every command needs is the shared `Composition`, with the terminal prompt as the vault's
/// passphrase source unless the caller brings its own (the screen asks in its own prompt).
extension Composition {
    init(backend: LatchkeyConfiguration.KeystoreBackend? = nil, passphrase: (any PassphraseProvider)? = nil) {
        self.init(
            environment: ProcessInfo.processInfo.environment, backend: backend, passphrase: passphrase ?? TerminalPassphrasePrompt(),
            workingDirectory: FileManager.default.currentDirectoryPath, warn: { Output.error("warning: " + $0) })
    }
}

/// `--keystore`, on every command that touches accounts.
struct KeystoreOptions: ParsableArguments {
    @Option(
        help:
            "The keystore: vault (encrypted file, the default), secret-service (desktop keyring) or openbao (config.toml's [openbao]); overrides config.toml.",
        completion: .list(LatchkeyConfiguration.KeystoreBackend.allCases.map(\.rawValue)),
        transform: { text in
            guard let backend = LatchkeyConfiguration.KeystoreBackend(rawValue: text) else {
                throw ValidationError("--keystore must be vault, secret-service or openbao")
            }
            return backend
        })
    var keystore: LatchkeyConfiguration.KeystoreBackend?

    func context(passphrase: (any PassphraseProvider)? = nil) -> Composition {
        Composition(backend: keystore, passphrase: passphrase)
    }
}

/// `--min-ttl`, on every command that hands out a token: how much lifetime the token must have
/// left, or it is refreshed first.
struct MinimumLifetimeOptions: ParsableArguments {
    @Option(name: .customLong("min-ttl"), help: "Refresh first when the token expires within this many seconds.")
    var seconds: Int = 60

    var interval: TimeInterval { TimeInterval(seconds) }

    func validate() throws {
        if seconds < 0 { throw ValidationError("--min-ttl must not be negative") }
    }
}

/// `--acr` and `--max-age` on `login` and `token`: a stronger or fresher sign-in (OIDC Core
/// §3.1.2.1), asked for and then checked against the ID token.
struct StepUpOptions: ParsableArguments {
    @Option(name: .customLong("acr"), help: "An authentication context class the sign-in must have (acr); repeat for alternatives.")
    var acrValues: [String] = []
    @Option(name: .customLong("max-age"), help: "Sign in again unless the person authenticated within this many seconds.")
    var maxAge: Int?

    var stepUp: StepUp { StepUp(acrValues: acrValues, maxAge: maxAge) }

    func validate() throws {
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age must not be negative") }
        if acrValues.contains(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ValidationError("--acr takes one value without spaces; repeat it for alternatives")
        }
    }
}

/// `--resource` and `--scope` on `token`, `exec` and `proof`: a token for one API or fewer scopes,
/// got with the account's refresh token (`AccountService.narrowedToken`).
struct NarrowingOptions: ParsableArguments {
    @Option(help: "A token for this API only (RFC 8707 resource indicator), got with the account's refresh token.")
    var resource: String?
    @Option(help: "A token with only these of the account's scopes, space-separated, such as \"read:user repo\".")
    var scope: String?

    /// What they ask for; `nil` for the account's own token.
    var narrowing: TokenNarrowing? {
        guard resource != nil || scope != nil else { return nil }
        return TokenNarrowing(resource: resource, scopes: scope.map(TokenNarrowing.scopes) ?? [])
    }

    func validate() throws {
        if let resource, let problem = ResourceIndicator.problem(resource) { throw ValidationError("--resource: \(problem)") }
        if let scope, TokenNarrowing.scopes(scope).isEmpty { throw ValidationError("--scope must name at least one scope") }
    }
}
