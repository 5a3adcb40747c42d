import Foundation
public import LatchkeyBroker
import LatchkeyEssentials
public import LatchkeyKeystore
public import LatchkeyOAuth
public import LatchkeyProviders
public import LatchkeySupport
public import LatchkeyVault

/// `latchkey doctor`: everything a sign-in depends on, checked without signing in, one finding
/// per line, each saying what was found and what to do about it.
///
/// Nothing here decrypts the vault, asks for a passphrase, starts a browser or prints a secret:
/// the vault's permissions and the kernel keyring's cached key are looked at, never used.
public struct Diagnosis: Sendable {
    /// One line of the report.
    public typealias Finding = LatchkeySupport.Finding

    /// What needs the system beyond files: the live implementations, or stand-ins in tests.
    public struct Probes: Sendable {
        /// Adds, reads back and invalidates a throwaway key; the failure, or `nil` when it works.
        public var kernelKeyring: @Sendable () -> KernelKeyring.Failure?
        /// Whether the Secret Service answers for the vault at the given path.
        public var secretService: @Sendable (String) -> SecretServiceKey.Availability
        /// Binds a loopback listener on the host and closes it; the failure, or `nil`.
        public var loopback: @Sendable (OAuthClient.LoopbackHost) async -> LoopbackListenerError?
        /// Whether stdin and stdout are both terminals (what `latchkey` alone needs for the screen).
        public var isTerminal: @Sendable () -> Bool
        /// Loads the HTTP library as the first request would: its version, or why it failed.
        public var httpLibrary: @Sendable () -> Result<String, TransportError>

        public init(
            kernelKeyring: @escaping @Sendable () -> KernelKeyring.Failure?,
            secretService: @escaping @Sendable (String) -> SecretServiceKey.Availability,
            loopback: @escaping @Sendable (OAuthClient.LoopbackHost) async -> LoopbackListenerError?,
            isTerminal: @escaping @Sendable () -> Bool,
            httpLibrary: @escaping @Sendable () -> Result<String, TransportError> = {
                Result { () throws(TransportError) in try LiveHTTPTransport.library() }
            }
        ) {
            self.kernelKeyring = kernelKeyring
            self.secretService = secretService
            self.loopback = loopback
            self.isTerminal = isTerminal
            self.httpLibrary = httpLibrary
        }

        public static let live = Probes(
            kernelKeyring: {
                // A short timeout: should the invalidation fail, the kernel drops the key anyway.
                let description = "latchkey:doctor:" + SecureRandom.token(byteCount: 8)
                let payload = SecureRandom.bytes(16)
                do throws(KernelKeyring.Failure) {
                    try KernelKeyring.store(payload, description: description, timeout: 5)
                } catch {
                    return error
                }
                defer { KernelKeyring.remove(description: description) }
                guard KernelKeyring.read(description: description) == payload else {
                    return .unavailable("a key stored there could not be read back")
                }
                return nil
            },
            secretService: { SecretServiceKey().availability(forVault: $0) },
            loopback: { host in
                do throws(LoopbackListenerError) {
                    let listener = try await LoopbackListener.bind(path: "/", host: host)
                    await listener.close()
                    return nil
                } catch {
                    return error
                }
            },
            isTerminal: { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 })
    }

    public let composition: Composition
    public let probes: Probes

    /// Reads the same providers, config.toml and keystore choice as every other command
    /// (`backend` is `--keystore`); the keystore is never opened with a passphrase.
    public init(environment: [String: String], backend: LatchkeyConfiguration.KeystoreBackend? = nil, probes: Probes = .live) {
        composition = Composition(environment: environment, backend: backend, passphrase: NoPassphrase())
        self.probes = probes
    }

    /// Every check in order.
    public func run() async -> [Finding] {
        var findings = providers() + configuration() + forwardedHosts() + (await keystore())
        findings.append(kernelKeyring())
        findings.append(secretService())
        findings += await loopback()
        findings.append(httpLibrary())
        findings.append(browser())
        findings.append(terminal())
        return findings
    }

    /// No finding is a `problem` (warnings do not count).
    public static func isHealthy(_ findings: [Finding]) -> Bool { !findings.contains { $0.severity == .problem } }

    private var environment: [String: String] { composition.environment }

    // MARK: - Files

    /// The directories searched, what loaded, and one `problem` per error in a provider file.
    func providers() -> [Finding] {
        let catalog = composition.catalog
        let directories = ProviderCatalog.searchDirectories(environment: environment)
        let searched = directories.map { directory in
            FileManager.default.fileExists(atPath: directory) ? directory : "\(directory) (absent)"
        }
        let names = catalog.providers.map(\.name).joined(separator: ", ")
        var findings: [Finding] = []
        if catalog.providers.isEmpty && catalog.errors.isEmpty {
            findings.append(
                Finding(
                    .warning, "providers", "none found in \(searched.joined(separator: ", "))",
                    fix:
                        "`latchkey providers add NAME` copies a preset (`latchkey providers presets` lists them) into \(directories[0]); then set its client_id; see latchkey-providers(5)"
                ))
        } else {
            findings.append(
                Finding(
                    .ok, "providers",
                    "\(catalog.providers.count) loaded (\(names.isEmpty ? "none usable" : names)) from \(searched.joined(separator: ", "))")
            )
        }
        for error in catalog.errors {
            findings.append(
                Finding(
                    .problem, "provider file", error.description,
                    fix: "edit \(error.file) (latchkey-providers(5)); `latchkey providers check` checks it again"))
        }
        return findings
    }

    /// config.toml: absent (defaults), readable and valid, or each of its errors.
    func configuration() -> [Finding] {
        let path = LatchkeyPaths(environment: environment).configFile
        if FileManager.default.fileExists(atPath: path) && access(path, R_OK) != 0 {
            return [
                Finding(
                    .problem, "config.toml", "\(path) cannot be read (\(String(cString: strerror(errno))))",
                    fix: "chmod 600 \(path)")
            ]
        }
        switch composition.configuration {
        case .success(let settings):
            let what = FileManager.default.fileExists(atPath: path) ? path : "\(path) absent, so the defaults"
            return [
                Finding(.ok, "config.toml", "\(what): keystore = \(settings.keystore.rawValue), unlock_timeout = \(settings.unlockTimeout)")
            ]
        case .failure(let errors):
            return errors.errors.map { error in
                Finding(.problem, "config.toml", error.description, fix: "edit \(path) (known keys: keystore, unlock_timeout; latchkey(1))")
            }
        }
    }

    // MARK: - Forwarded hosts

    /// What a host reached with `ssh -R` may ask the agent for, per provider file and per
    /// config.toml `[accounts."…"]` table setting `forward`: what decides it for each account.
    /// The vault stays closed, so the accounts themselves are not listed.
    func forwardedHosts() -> [Finding] {
        guard case .success(let settings) = composition.configuration else {
            return [Finding(.ok, "forwarded hosts", "none get anything while config.toml has errors (fail closed)")]
        }
        var findings = composition.catalog.providers.map { provider in
            Finding(
                .ok, "forwarded hosts",
                "\(provider.name): "
                    + ForwardedReach.explanation(of: provider, forward: provider.sharing.forward ?? false, source: .providerFile))
        }
        for account in settings.accounts {
            guard let forward = account.sharing.forward else { continue }
            guard let provider = try? composition.catalog.provider(named: account.selector.provider) else {
                if forward {
                    findings.append(
                        Finding(
                            .warning, "forwarded hosts",
                            "forward = true in config.toml's [accounts.\"\(TerminalText.sanitized(account.selector.description, maxLength: 200))\"],"
                                + " but no provider file named \(TerminalText.sanitized(account.selector.provider, maxLength: 80)) loads:"
                                + " a forwarded host gets none of its tokens until one does",
                            fix: "fix or add that provider file (the problems above name its file and line)"))
                }
                continue
            }
            findings.append(
                Finding(
                    .ok, "forwarded hosts",
                    ForwardedReach.explanation(
                        of: provider, forward: forward, source: .accountsTable(selector: account.selector.description))))
        }
        return findings
    }

    // MARK: - Keystore

    /// The keystore's own account of itself (`Keystore.findings`).
    func keystore() async -> [Finding] { await composition.keystore.findings(environment: environment) }

    /// The kernel keyring keeps an unlocked vault's key between commands; without it each asks.
    func kernelKeyring() -> Finding {
        guard let failure = probes.kernelKeyring() else {
            return Finding(.ok, "kernel keyring", "a key can be added, read and invalidated, so `latchkey unlock` works")
        }
        return Finding(
            .warning, "kernel keyring", failure.description,
            fix: "allow the keyctl system calls (container or seccomp profile), or set LATCHKEY_PASSPHRASE_FILE for scripts")
    }

    func secretService() -> Finding {
        let keystore = composition.keystore
        guard keystore.backendName == "secret-service" else {
            return Finding(.ok, "Secret Service", "not chosen (keystore = secret-service in config.toml or --keystore chooses it)")
        }
        switch probes.secretService(keystore.location) {
        case .holdsKey:
            return Finding(.ok, "Secret Service", "reachable, and it holds this vault's key")
        case .noKey where FileManager.default.fileExists(atPath: keystore.location):
            return Finding(
                .problem, "Secret Service", "reachable, but it holds no key for \(keystore.location) (was the desktop keyring reset?)",
                fix: "move \(keystore.location) aside and sign in again")
        case .noKey:
            return Finding(.ok, "Secret Service", "reachable; the first sign-in stores a new key there")
        case .unusable(let reason):
            return Finding(.problem, "Secret Service", reason)
        }
    }

    // MARK: - Sign-in

    /// 127.0.0.1 and [::1]: a failure matters most to the providers that listen there.
    func loopback() async -> [Finding] {
        let loopbackProviders = composition.catalog.providers.filter { $0.listeningHost != nil }
        var findings: [Finding] = []
        for (host, label) in [(OAuthClient.LoopbackHost.ipv4, "IPv4 loopback"), (.ipv6, "IPv6 loopback")] {
            guard let failure = await probes.loopback(host) else {
                findings.append(Finding(.ok, label, "a listener binds on \(host.rawValue) and closes"))
                continue
            }
            let affected = loopbackProviders.filter { $0.listeningHost == host || $0.listeningHost == .localhost }.map(\.name)
            let other = host == .ipv4 ? "[::1]" : "127.0.0.1"
            let fix =
                host == .ipv4
                ? "bring up the loopback interface (ip link set lo up), or sign in with --paste or --device"
                : "enable IPv6 on lo (sysctl net.ipv6.conf.lo.disable_ipv6=0), or set loopback_host = \"\(other)\" in the provider file"
            findings.append(
                Finding(
                    affected.isEmpty ? .warning : .problem, label,
                    "\(failure.description)" + (affected.isEmpty ? "" : "; affects \(affected.joined(separator: ", "))"), fix: fix))
        }
        return findings
    }

    /// libcurl carries every request to a provider; commands load it only when they need it.
    func httpLibrary() -> Finding {
        switch probes.httpLibrary() {
        case .success(let version):
            // "libcurl/7.88.1 OpenSSL/3.0.19": the library and its TLS, not every feature it was built with.
            let named = version.split(separator: " ").prefix(2).joined(separator: " ")
            return Finding(.ok, "HTTP client", "\(named) loads (proxies come from the environment, never for loopback)")
        case .failure(.httpLibraryMissing(let reason)):
            return Finding(.problem, "HTTP client", reason, fix: TransportError.installHTTPLibrary)
        case .failure(let error):
            return Finding(.problem, "HTTP client", error.description)
        }
    }

    /// Which browser `login` would start (none is started here); over SSH, what to use instead.
    func browser() -> Finding {
        if let connection = environment["SSH_CONNECTION"], !connection.isEmpty {
            return Finding(
                .ok, "browser",
                "this is an SSH session ($SSH_CONNECTION): a browser here would open on this machine, so the screen offers "
                    + "paste and device codes; on the command line use `latchkey login NAME --paste` or `--device`")
        }
        if let path = BrowserLauncher(environment: environment).firstAvailable {
            return Finding(
                .ok, "browser", "\(path) opens sign-in pages (\(environment["BROWSER"].map { _ in "from $BROWSER" } ?? "xdg-open"))")
        }
        return Finding(
            .warning, "browser", "neither $BROWSER nor xdg-open is found on PATH, so login prints the address to open",
            fix: "install xdg-utils or set BROWSER, or use `latchkey login NAME --paste` or `--device`")
    }

    /// The screen needs a terminal; without one `latchkey` alone prints the status instead.
    func terminal() -> Finding {
        let term = environment["TERM"] ?? ""
        let fallback = "so `latchkey` alone prints the status instead of opening the screen"
        if term.isEmpty || term == "dumb" {
            return Finding(
                .warning, "terminal", "TERM is \(term.isEmpty ? "not set" : "dumb"), \(fallback)",
                fix: "run it in a terminal emulator that sets TERM (such as xterm-256color)")
        }
        guard probes.isTerminal() else {
            return Finding(.warning, "terminal", "TERM is \(term), but stdin or stdout is not a terminal, \(fallback)")
        }
        return Finding(.ok, "terminal", "TERM is \(term) and stdin and stdout are a terminal, so `latchkey` alone opens the screen")
    }
}

/// The doctor never unlocks anything: a passphrase request is a bug, answered with "locked".
private struct NoPassphrase: PassphraseProvider {
    func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        throw .locked("latchkey doctor does not unlock the vault")
    }
}
