public import Foundation
public import LatchkeyBrokerWire
public import LatchkeyVault

/// Everything the screen shows, and how keys and async results change it.
///
/// A pure state machine: `handle(_:)` returns the work to do as `Effect`s and never performs it,
/// so every key and every server answer can be tested without a terminal or a network.
public struct AppState: Sendable {
    /// What fills the screen between the header and the footer.
    public enum Mode: Sendable, Equatable {
        case unlock(UnlockPrompt)
        case list
        case help
        case confirmSignOut(AccountSummary.ID)
        /// The agent asks whether to release a token (`confirm = true`): y or n.
        case approveRelease(WaitingRelease)
        /// A sign-in or a phone enrollment, whatever the provider's kind.
        case signIn(SignInScreen)
        /// Adding a provider file from a preset (`+`).
        case addProvider(AddProviderScreen)
    }

    /// One line of the list: a provider, or an account nested under it.
    public enum Row: Sendable, Hashable {
        case provider(String)
        case account(AccountSummary.ID)
    }

    /// Something running for an account right now, or how it last failed in this session.
    public enum Activity: Sendable, Equatable {
        case refreshing
        case signingOut
        case failed(String)
    }

    /// A line of feedback above the footer.
    public struct Message: Sendable, Equatable {
        public var text: String
        public var isError: Bool
    }

    public var providers: [ProviderSummary]
    public var accounts: [AccountSummary] = []
    public var activity: [AccountSummary.ID: Activity] = [:]
    /// The last failed sign-in per provider (name → message), shown on its row.
    public var providerErrors: [String: String] = [:]
    public var mode: Mode
    public var selected: Row?
    public var filter = ""
    public var isEditingFilter = false
    public var message: Message?
    public var now: Date
    public var size: TerminalSize
    /// Advances on every tick; the renderer picks the spinner's frame from it.
    public var spinnerStep = 0
    public var keystoreBackend = "vault"
    public var unlockedAt: Date?
    public var accountsLoaded = false
    /// `latchkey demo`'s panel; nil outside the demo.
    public var demo: DemoPanel?
    /// Releases the agent holds for a person's approval, oldest first; the first is asked when
    /// the list is showing.
    public var waitingReleases: [WaitingRelease] = []
    /// Accounts already refreshed ahead of expiry in this session, so a failure is not retried
    /// every tick (the person can still press `r`).
    var proactivelyRefreshed: Set<AccountSummary.ID> = []

    /// Tokens this close to expiry are refreshed while the screen is open.
    public static let proactiveRefreshWindow: TimeInterval = 60

    public init(providers: [ProviderSummary], now: Date, size: TerminalSize, unlock: UnlockPrompt? = nil) {
        self.providers = providers
        self.now = now
        self.size = size
        mode = unlock.map(Mode.unlock) ?? .list
        selected = providers.first.map { .provider($0.name) }
    }

    // MARK: - Rows

    /// The list as shown: every provider matching the filter, each followed by its accounts.
    public var rows: [Row] {
        let needle = filter.lowercased()
        var rows: [Row] = []
        for provider in providers {
            let accounts = accounts.filter { $0.id.provider == provider.name }
            let providerMatches =
                needle.isEmpty || provider.name.lowercased().contains(needle) || provider.displayName.lowercased().contains(needle)
            let matchingAccounts = providerMatches ? accounts : accounts.filter { $0.label.lowercased().contains(needle) }
            guard providerMatches || !matchingAccounts.isEmpty else { continue }
            rows.append(.provider(provider.name))
            rows += matchingAccounts.map { .account($0.id) }
        }
        return rows
    }

    /// Where the selection is in `rows` (the first row when the selected one is filtered out).
    public var selectedIndex: Int? {
        let rows = rows
        guard !rows.isEmpty else { return nil }
        return selected.flatMap { rows.firstIndex(of: $0) } ?? 0
    }

    public func provider(named name: String) -> ProviderSummary? { providers.first { $0.name == name } }
    public func account(_ id: AccountSummary.ID) -> AccountSummary? { accounts.first { $0.id == id } }

    /// The account on the selected row, if it is an account row.
    public var selectedAccount: AccountSummary? {
        guard let index = selectedIndex, case .account(let id) = rows[index] else { return nil }
        return account(id)
    }

    /// The provider of the selected row (an account row's own provider).
    public var selectedProvider: ProviderSummary? {
        guard let index = selectedIndex else { return nil }
        switch rows[index] {
        case .provider(let name): return provider(named: name)
        case .account(let id): return provider(named: id.provider)
        }
    }

    /// What the status column says about an account.
    public func status(of account: AccountSummary) -> AccountStatus {
        switch activity[account.id] {
        case .refreshing: return .refreshing
        case .signingOut: return .signingOut
        case .failed(let message): return .error(message)
        case nil: break
        }
        if let error = account.lastError { return .error(error) }
        if let expiresAt = account.expiresAt, expiresAt <= now { return .expired }
        return .signedIn
    }

    // MARK: - Events

    /// Applies `event` and returns the work it calls for.
    public mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .key(let key): return handle(key)
        case .tick(let date):
            now = date
            spinnerStep &+= 1
            return refreshAheadOfExpiry()
        case .resize(let newSize):
            size = newSize
            return []
        case .accountsLoaded(let loaded, let backend):
            accounts = loaded
            keystoreBackend = backend
            if case .unlock = mode { mode = .list }
            if !accountsLoaded { unlockedAt = now }
            accountsLoaded = true
            return []
        case .unlockNeeded(let prompt):
            mode = .unlock(prompt)
            return []
        case .unlockFailed(let reason):
            guard case .unlock(var prompt) = mode else { return [] }
            prompt.restart(error: reason)
            mode = .unlock(prompt)
            return []
        case .accountUpdated(let account):
            upsert(account)
            activity[account.id] = nil
            proactivelyRefreshed.remove(account.id)
            return []
        case .refreshFailed(let id, let reason):
            activity[id] = .failed(reason)
            message = Message(text: "Refresh failed: \(reason)", isError: true)
            return []
        case .signedOut(let id, let note):
            let label = account(id)?.label ?? id.subject
            accounts.removeAll { $0.id == id }
            activity[id] = nil
            if selected == .account(id) { selected = .provider(id.provider) }
            message = Message(text: "Signed out \(label). \(note)", isError: false)
            return []
        case .signOutFailed(let id, let reason):
            activity[id] = .failed(reason)
            message = Message(text: "Sign-out failed: \(reason)", isError: true)
            return []
        case .signIn(let progress):
            return handle(progress)
        case .tokenReady(let id, let token):
            message = Message(text: "Copied the access token of \(account(id)?.label ?? id.subject) (OSC 52).", isError: false)
            return [.writeClipboard(token)]
        case .failed(let reason):
            message = Message(text: reason, isError: true)
            return []
        case .notice(let text):
            message = Message(text: text, isError: false)
            return []
        case .releaseWaiting(let request):
            waitingReleases.append(request)
            askNextRelease()
            return []
        case .releaseClosed(let id):
            waitingReleases.removeAll { $0.id == id }
            if case .approveRelease(let asked) = mode, asked.id == id { mode = .list }
            askNextRelease()
            return []
        case .demoPanel(let panel):
            demo = panel
            return []
        case .presetsLoaded(let choices):
            guard case .addProvider(var screen) = mode else { return [] }
            screen.presetsLoaded(choices)
            mode = .addProvider(screen)
            return []
        case .providerAdded(let name, let file, let loaded):
            providers = loaded
            if case .addProvider = mode { mode = .list }
            selected = .provider(name)
            message = Message(text: "Added \(name) (\(file)); press Enter to sign in.", isError: false)
            return []
        case .providerNotAdded(let reason):
            guard case .addProvider(var screen) = mode else { return [] }
            screen.failed(reason)
            mode = .addProvider(screen)
            return []
        }
    }

    private mutating func upsert(_ account: AccountSummary) {
        if let index = accounts.firstIndex(where: { $0.id == account.id }) {
            accounts[index] = account
        } else {
            accounts.append(account)
        }
    }

    /// Starts a refresh for each account whose token runs out within the window.
    private mutating func refreshAheadOfExpiry() -> [Effect] {
        var effects: [Effect] = []
        for account in accounts where account.hasRefreshToken && activity[account.id] == nil {
            guard let expiresAt = account.expiresAt, expiresAt.timeIntervalSince(now) < Self.proactiveRefreshWindow,
                !proactivelyRefreshed.contains(account.id)
            else { continue }
            proactivelyRefreshed.insert(account.id)
            activity[account.id] = .refreshing
            effects.append(.refresh(account.selector))
        }
        return effects
    }

    private mutating func handle(_ progress: SignInProgress) -> [Effect] {
        guard case .signIn(var screen) = mode else {
            // The screen was left (Esc, or p/d started another sign-in): nothing more to show.
            return []
        }
        switch progress {
        case .finished(let account, let added):
            upsert(account)
            activity[account.id] = nil
            providerErrors[account.id.provider] = nil
            let factor = account.secondFactor.map { " (second factor: \($0))" } ?? ""
            switch screen.purpose {
            case .signIn, .signInAgain:
                let name = screen.purpose.provider
                let providerName = provider(named: name)?.displayName ?? name
                message = Message(
                    text: "\(added ? "Signed in" : "Signed in again") to \(providerName) as \(account.label)\(factor).", isError: false)
            case .enroll:
                message = Message(text: "Enrolled the phone for \(account.label)\(factor).", isError: false)
            }
            mode = .list
            selected = .account(account.id)
            return [.loadAccounts]
        case .failed(let problem):
            if case .enroll = screen.purpose {} else { providerErrors[screen.purpose.provider] = problem.message }
            guard screen.keepsFailure else {
                mode = .list
                message = Message(text: "Sign-in failed: \(problem.message)", isError: true)
                return []
            }
        default:
            break
        }
        screen.apply(progress, now: now)
        mode = .signIn(screen)
        return []
    }

    // MARK: - Keys

    /// Asks about the oldest waiting release, when the list is what the person sees.
    private mutating func askNextRelease() {
        guard mode == .list, let next = waitingReleases.first else { return }
        mode = .approveRelease(next)
    }

    private mutating func handle(_ key: Key) -> [Effect] {
        switch mode {
        case .unlock(var prompt):
            let outcome = prompt.handle(key)
            mode = .unlock(prompt)
            switch outcome {
            case .editing: return []
            case .submit(let passphrase): return [.unlock(passphrase)]
            case .quit: return [.quit]
            }
        case .help:
            mode = .list
            return []
        case .approveRelease(let request):
            // Answered here or left for elsewhere, it is not asked again; the next one is.
            mode = .list
            waitingReleases.removeAll { $0.id == request.id }
            defer { askNextRelease() }
            switch key {
            case .character("y"), .character("Y"): return [.answerRelease(id: request.id, approve: true)]
            case .character("n"), .character("N"): return [.answerRelease(id: request.id, approve: false)]
            default:
                // Left to `latchkey approve` or the agent's terminal; refused at its deadline.
                message = Message(
                    text: "Request \(request.id) still waits: latchkey approve \(request.id) or latchkey deny \(request.id).",
                    isError: false)
                return []
            }
        case .confirmSignOut(let id):
            mode = .list
            guard key == .character("y") || key == .character("Y"), let account = account(id) else {
                message = Message(text: "Kept \(account(id)?.label ?? id.subject).", isError: false)
                return []
            }
            activity[id] = .signingOut
            return [.signOut(account.selector)]
        case .addProvider(var screen):
            let outcome = screen.handle(key)
            mode = .addProvider(screen)
            switch outcome {
            case .none: return []
            case .write(let draft): return [.addProvider(draft)]
            case .close:
                mode = .list
                return []
            case .beep: return [.beep]
            }
        case .signIn(var screen):
            let outcome = screen.handle(key, now: now, demo: demo != nil)
            mode = .signIn(screen)
            switch outcome {
            case .none: return []
            case .answer(let answer): return [.answer(answer)]
            case .enroll(let phoneNumber, let displayName):
                guard case .enroll(let id) = screen.purpose, let account = account(id) else { return [.beep] }
                return [.enrollPhone(account.selector, phoneNumber: phoneNumber, displayName: displayName)]
            case .cancel:
                mode = .list
                if case .enroll = screen.purpose {
                    message = Message(text: "Enrollment cancelled.", isError: false)
                } else {
                    message = Message(text: "Sign-in cancelled.", isError: false)
                }
                return [.cancelSignIn]
            case .switchMode(let chosen):
                var restarted = SignInScreen(purpose: screen.purpose, startedAt: now, mode: chosen)
                restarted.firstFactor = screen.firstFactor
                mode = .signIn(restarted)
                return [.cancelSignIn, screen.purpose.signIn(mode: chosen)]
            case .restart:
                mode = .signIn(SignInScreen(purpose: screen.purpose, startedAt: now))
                return [screen.purpose.signIn()]
            case .close:
                mode = .list
                return []
            case .demo(let visit):
                message = Message(text: "The demo browser is signing in as the demo user…", isError: false)
                return [.demoBrowse(visit)]
            case .beep: return [.beep]
            }
        case .list:
            if isEditingFilter { return editFilter(key) }
            return handleListKey(key)
        }
    }

    private mutating func editFilter(_ key: Key) -> [Effect] {
        switch key {
        case .enter: isEditingFilter = false
        case .escape:
            isEditingFilter = false
            filter = ""
        case .backspace: if !filter.isEmpty { filter.removeLast() }
        case .up, .down, .pageUp, .pageDown, .home, .end: return handleListKey(key)
        case .character(let character) where !character.isNewline: filter.append(character)
        default: return [.beep]
        }
        return []
    }

    private mutating func handleListKey(_ key: Key) -> [Effect] {
        switch key {
        case .up, .character("k"): moveSelection(by: -1)
        case .down, .character("j"): moveSelection(by: 1)
        case .pageUp: moveSelection(by: -10)
        case .pageDown: moveSelection(by: 10)
        case .home, .character("g"): moveSelection(by: -rows.count)
        case .end, .character("G"): moveSelection(by: rows.count)
        case .enter:
            // On an account row: that account again (login_hint, identity checked); else a new one.
            if let account = selectedAccount { return startSignIn(.signInAgain(account.id)) }
            guard let provider = selectedProvider else { return [.beep] }
            return startSignIn(.signIn(provider: provider.name))
        case .character("n"):
            guard let provider = selectedProvider else { return [.beep] }
            return startSignIn(.signIn(provider: provider.name))
        case .character("e"):
            guard let account = selectedAccountOrOnlyOne, provider(named: account.id.provider)?.enrollsPhones == true else {
                message = Message(text: "e enrolls a phone on a signed-in firebase account; select one first.", isError: true)
                return [.beep]
            }
            mode = .signIn(SignInScreen(purpose: .enroll(account.id), startedAt: now))
        case .character("r"):
            guard let account = selectedAccountOrOnlyOne else { return [.beep] }
            guard account.hasRefreshToken else {
                message = Message(text: "\(account.label) has no refresh token; press Enter to sign in again.", isError: true)
                return [.beep]
            }
            activity[account.id] = .refreshing
            return [.refresh(account.selector)]
        case .character("x"):
            guard let account = selectedAccountOrOnlyOne else { return [.beep] }
            mode = .confirmSignOut(account.id)
        case .character("m"):
            guard let account = selectedAccount else {
                message = Message(
                    text: "m makes the selected account the one its provider means in this directory; select an account.", isError: true)
                return [.beep]
            }
            return [.mapHere(account.selector)]
        case .character("D"):
            guard let account = selectedAccount else {
                message = Message(text: "D makes the selected account its provider's default; select an account first.", isError: true)
                return [.beep]
            }
            return [.makeDefault(account.selector)]
        case .character("c"):
            guard let account = selectedAccountOrOnlyOne else { return [.beep] }
            message = Message(text: "Copying the access token of \(account.label)…", isError: false)
            return [.copyToken(account.selector)]
        case .character("+"):
            mode = .addProvider(AddProviderScreen())
            message = nil
            return [.loadPresets]
        case .character("/"):
            isEditingFilter = true
        case .character("?"):
            mode = .help
        case .character("q"):
            return [.quit]
        case .escape:
            filter = ""
            message = nil
        default:
            return [.beep]
        }
        return []
    }

    private mutating func startSignIn(_ purpose: SignInScreen.Purpose) -> [Effect] {
        providerErrors[purpose.provider] = nil
        message = nil
        mode = .signIn(SignInScreen(purpose: purpose, startedAt: now))
        return [purpose.signIn()]
    }

    /// The selected account, or on a provider row the provider's only account.
    private var selectedAccountOrOnlyOne: AccountSummary? {
        if let account = selectedAccount { return account }
        guard let provider = selectedProvider else { return nil }
        let accounts = accounts.filter { $0.id.provider == provider.name }
        return accounts.count == 1 ? accounts[0] : nil
    }

    private mutating func moveSelection(by offset: Int) {
        let rows = rows
        guard let index = selectedIndex else { return }
        selected = rows[min(max(index + offset, 0), rows.count - 1)]
    }
}

/// The status column's words.
public enum AccountStatus: Sendable, Equatable {
    case signedIn
    case expired
    case refreshing
    case signingOut
    case error(String)

    public var label: String {
        switch self {
        case .signedIn: return "signed in"
        case .expired: return "expired"
        case .refreshing: return "refreshing…"
        case .signingOut: return "signing out…"
        case .error: return "error"
        }
    }
}
