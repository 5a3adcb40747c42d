import Foundation
import LatchkeyAccounts
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault

/// Does the work `AppState` asks for. Network and keystore work runs in detached tasks (never on
/// the terminal's thread, which is busy in the loop) and reports back through the inbox.
final class EffectRunner {
    private let inbox: Inbox
    private let service: AccountService
    private let typedPassphrase: TypedPassphrase?
    private let vaultPath: String
    private let driver: any TerminalDriver
    /// Running over SSH: browser sign-ins ask how to sign in first (`ScreenInteraction`).
    private let isRemote: Bool
    /// Where presets and providers.d are found.
    private let environment: [String: String]
    private var signIn: Task<Void, Never>?
    /// Answers typed on screen for the sign-in waiting on one (a pasted URL, a password, a code).
    private let replies = PromptReplies()
    private var tasks: [Task<Void, Never>] = []
    /// `latchkey demo`'s browser, the only one that can be driven from the screen.
    private let demoBrowse: (@Sendable (DemoVisit) async throws -> Void)?

    init(
        inbox: Inbox, service: AccountService, typedPassphrase: TypedPassphrase?, vaultPath: String, driver: any TerminalDriver,
        environment: [String: String] = [:], isRemote: Bool = false, demoBrowse: (@Sendable (DemoVisit) async throws -> Void)? = nil
    ) {
        self.environment = environment
        self.isRemote = isRemote
        self.demoBrowse = demoBrowse
        self.inbox = inbox
        self.service = service
        self.typedPassphrase = typedPassphrase
        self.vaultPath = vaultPath
        self.driver = driver
    }

    /// The first thing the screen does: ask for the passphrase when the vault needs one, else read it.
    func start() {
        watchAgent()
        if typedPassphrase != nil && !FileManager.default.fileExists(atPath: vaultPath) {
            inbox.post(.unlockNeeded(UnlockPrompt(vaultPath: vaultPath, creating: true)))
        } else {
            loadAccounts()
        }
    }

    func perform(_ effect: Effect) {
        switch effect {
        case .answerRelease(let id, let approve):
            guard let endpoint = AgentSocket.endpoint({ self.environment[$0] }) else { return }
            spawn { inbox in
                do {
                    var client = try AgentClient(endpoint: endpoint)
                    let answer = try client.exchange(.approval(ApprovalRequest(id: id, approve: approve)))
                    if case .refused(let refusal) = answer {
                        inbox.post(.failed(TerminalText.sanitized(refusal.message, maxLength: 300)))
                    } else {
                        inbox.post(.notice("\(approve ? "Approved" : "Denied") request \(id)."))
                    }
                } catch {
                    inbox.post(.failed(String(describing: error)))
                }
            }
        case .unlock(let passphrase):
            typedPassphrase?.set(passphrase)
            loadAccounts()
        case .loadAccounts:
            loadAccounts()
        case .startSignIn(let name, let mode, let account):
            startSignIn(name, mode: mode, account: account)
        case .demoBrowse(let visit):
            guard let demoBrowse else { return }
            spawn { inbox in
                do {
                    try await demoBrowse(visit)
                } catch {
                    inbox.post(.failed("\(error)"))
                }
            }
        case .cancelSignIn:
            signIn?.cancel()
            signIn = nil
        case .answer(let answer):
            replies.deliver(answer)
        case .enrollPhone(let selector, let phoneNumber, let displayName):
            enroll(selector, phoneNumber: phoneNumber, displayName: displayName)
        case .refresh(let selector):
            spawn { [service] inbox in
                do {
                    inbox.post(.accountUpdated(AccountSummary(try await service.refresh(selector))))
                } catch {
                    inbox.post(.refreshFailed(Self.id(of: selector, in: try? await service.keystore.records()), Self.describe(error)))
                }
            }
        case .signOut(let selector):
            spawn { [service] inbox in
                do {
                    let outcome = try await service.signOut(selector)
                    let note: String
                    switch outcome.1 {
                    case .success(.revoked): note = "Its tokens were revoked at the provider."
                    case .success(.unsupported):
                        note = "The provider offers no revocation: its tokens were deleted here and stay valid there until they expire."
                    case .failure(let error): note = "Revocation failed (\(Self.describe(error))); the tokens were deleted here."
                    }
                    inbox.post(.signedOut(AccountSummary(outcome.0).id, note: note))
                } catch {
                    inbox.post(.signOutFailed(Self.id(of: selector, in: try? await service.keystore.records()), Self.describe(error)))
                }
            }
        case .copyToken(let selector):
            spawn { [service] inbox in
                do {
                    let token = try await service.validToken(for: selector, minimumLifetime: 30, idToken: false)
                    let record = try await selector.select(from: service.keystore.records())
                    inbox.post(.tokenReady(AccountSummary(record).id, token))
                } catch {
                    inbox.post(.failed("Copy failed: \(Self.describe(error))"))
                }
            }
        case .mapHere(let selector):
            spawn { [service, environment] inbox in
                let directory = FileManager.default.currentDirectoryPath
                let configFile = LatchkeyPaths(environment: environment).configFile
                do {
                    let record = try selector.select(from: try await service.keystore.records())
                    try DirectoryMappingEdit.map(
                        record.provider, to: record.label, in: directory, configFile: configFile, environment: environment)
                    inbox.post(
                        .accountsLoaded(
                            EffectRunner.summaries(try await service.keystore.records(), environment: environment),
                            backend: service.keystore.backendName))
                    inbox.post(
                        .notice("\(record.provider) now means \(record.label) in \(directory) (saved in \(configFile))."))
                } catch {
                    inbox.post(.failed("Could not map the directory: \(Self.describe(error))"))
                }
            }
        case .makeDefault(let selector):
            spawn { [service, environment] inbox in
                do {
                    let record = try await service.makeDefault(selector)
                    inbox.post(
                        .accountsLoaded(
                            EffectRunner.summaries(try await service.keystore.records(), environment: environment),
                            backend: service.keystore.backendName))
                    inbox.post(.notice("\(record.provider) now means \(record.label)."))
                } catch {
                    inbox.post(.failed("Could not make it the default: \(Self.describe(error))"))
                }
            }
        case .loadPresets:
            spawn { [environment] inbox in
                let presets = ProviderPresets(environment: environment).presets.map { preset in
                    AddProviderScreen.Choice(
                        preset: preset.name, label: preset.displayName.map { "\(preset.name) — \($0)" } ?? preset.name,
                        issuer: preset.issuer, takesIssuer: preset.issuer != nil)
                }
                inbox.post(.presetsLoaded(presets))
            }
        case .addProvider(let draft):
            spawn { [service, environment] inbox in
                let directories = ProviderCatalog.searchDirectories(environment: environment)
                var draft = draft
                // As `providers add` does; a discovery that fails leaves the file asking for a client_id.
                if case .success(true) = await draft.offersRegistration(engine: service.engine) { draft.registersDynamically = true }
                do {
                    let file = try ProviderPresets(environment: environment).write(draft, into: directories[0], alongside: directories)
                    let catalog = service.reloadCatalog()
                    inbox.post(.providerAdded(name: draft.name, file: file, providers: catalog.providers.map(ProviderSummary.init)))
                } catch {
                    inbox.post(.providerNotAdded(Self.describe(error)))
                }
            }
        case .writeClipboard(let token):
            driver.writeControlSequence(Painter.clipboard(token.exposedValue))
        case .beep:
            driver.beep()
        case .quit:
            break
        }
    }

    /// Stops everything still running (the screen is closing).
    func cancelAll() {
        signIn?.cancel()
        for task in tasks { task.cancel() }
    }

    // MARK: - Work

    private func loadAccounts() {
        spawn { [service, typedPassphrase, vaultPath, environment] inbox in
            do throws(KeystoreError) {
                let records = try await service.keystore.records()
                inbox.post(
                    .accountsLoaded(EffectRunner.summaries(records, environment: environment), backend: service.keystore.backendName))
            } catch .locked where typedPassphrase != nil {
                inbox.post(.unlockNeeded(UnlockPrompt(vaultPath: vaultPath, creating: false)))
            } catch .wrongPassphrase where typedPassphrase != nil {
                inbox.post(.unlockFailed("Wrong passphrase; try again."))
            } catch {
                inbox.post(.failed(error.description))
            }
        }
    }

    private func startSignIn(_ name: String, mode: OAuthClient.RedirectMode?, account: AccountSelector?) {
        runFlow { service, interaction in
            let (record, outcome) = try await service.signIn(
                provider: try service.catalog.provider(named: name), mode: mode, account: account, interaction: interaction)
            return (record, outcome == .added)
        }
    }

    private func enroll(_ selector: AccountSelector, phoneNumber: String, displayName: String?) {
        runFlow { service, interaction in
            (try await service.enrollPhone(selector, phoneNumber: phoneNumber, displayName: displayName, interaction: interaction), false)
        }
    }

    /// Runs one sign-in or enrollment (replacing any still running) with the screen as its
    /// interaction, and reports how it ended. `mode` (p or d on a browser screen) applies to the
    /// browser sign-in, which for a firebase provider is its first factor's.
    private func runFlow(
        _ flow: @escaping @Sendable (AccountService, ScreenInteraction) async throws -> (AccountRecord, added: Bool)
    ) {
        signIn?.cancel()
        replies.reset()
        let interaction = ScreenInteraction(inbox: inbox, replies: replies, isRemote: isRemote)
        let (service, inbox) = (service, inbox)
        signIn = Task.detached {
            do {
                let (record, added) = try await flow(service, interaction)
                inbox.post(.signIn(.finished(AccountSummary(record), added: added)))
            } catch {
                // A cancelled sign-in was left by the screen already (Esc, or p/d started another).
                guard !Task.isCancelled else { return }
                inbox.post(.signIn(.failed(SignInProblem(error))))
            }
        }
    }

    /// Hears of token releases that wait for a person from `latchkey agent` (the socket
    /// `LATCHKEY_AGENT` names, or the default one), for as long as it answers; nothing when none does.
    private func watchAgent() {
        guard let endpoint = AgentSocket.endpoint({ environment[$0] }) else { return }
        let inbox = inbox
        Thread.detachNewThread {
            guard let client = try? AgentClient(endpoint: endpoint) else { return }
            var watching = client
            guard (try? watching.send(.watch, client: .current())) != nil else { return }
            while let event = try? watching.answer() {
                switch event {
                case .confirmation(let request): inbox.post(.releaseWaiting(request))
                case .closed(let id): inbox.post(.releaseClosed(id))
                default: return
                }
            }
        }
    }

    private func spawn(_ work: @escaping @Sendable (Inbox) async -> Void) {
        tasks.removeAll { $0.isCancelled }
        let inbox = inbox
        tasks.append(Task.detached { await work(inbox) })
    }

    /// The accounts as the list shows them, marked where config.toml maps their provider in the
    /// directory the screen runs in (read anew, so a mapping set with `m` shows at once).
    static func summaries(_ records: [AccountRecord], environment: [String: String]) -> [AccountSummary] {
        let configFile = LatchkeyPaths(environment: environment).configFile
        let mappings = (try? LatchkeyConfiguration.load(path: configFile, environment: environment).directories) ?? DirectoryAccounts()
        let report = StatusReport(
            records: records, keystore: "", now: Date(), here: (mappings, FileManager.default.currentDirectoryPath))
        return zip(records, report.accounts).map { record, reported in
            var summary = AccountSummary(record)
            summary.appliesHere = reported.appliesHere
            return summary
        }
    }

    private static func describe(_ error: any Error) -> String {
        (error as? any LatchkeyError)?.description ?? String(describing: error)
    }

    /// The account a selector named, for reporting a failure on its row.
    private static func id(of selector: AccountSelector, in records: [AccountRecord]?) -> AccountSummary.ID {
        if let records, let record = try? selector.select(from: records) { return AccountSummary(record).id }
        return AccountSummary.ID(provider: selector.provider, issuer: "", subject: selector.account ?? "")
    }
}
