public import Foundation
import LatchkeyCore

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
        case signIn(SignInScreen)
        /// A firebase sign-in, or a phone enrollment.
        case secondFactor(SecondFactorScreen)
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
    /// Running over SSH (`$SSH_CONNECTION`): a browser started here would open on this remote
    /// machine, so sign-in asks first whether to paste the redirect URL or use a device code.
    public var isRemote = false
    /// `latchkey demo`'s panel; nil outside the demo.
    public var demo: DemoPanel?
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
        case .secondFactor(let progress):
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
        case .demoPanel(let panel):
            demo = panel
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
        switch progress {
        case .finished(let account, let added):
            upsert(account)
            activity[account.id] = nil
            providerErrors[account.id.provider] = nil
            let providerName = provider(named: account.id.provider)?.displayName ?? account.id.provider
            let factor = account.secondFactor.map { " (second factor: \($0))" } ?? ""
            message = Message(
                text: "\(added ? "Signed in" : "Signed in again") to \(providerName) as \(account.label)\(factor).", isError: false)
            switch mode {
            case .signIn, .secondFactor:
                mode = .list
                selected = .account(account.id)
            default: break
            }
            return [.loadAccounts]
        case .failed(let provider, let problem):
            // A firebase sign-in (or its first factor's): its screen shows what went wrong and what to do next.
            if case .secondFactor = mode { return handle(SecondFactorProgress.failed(provider: provider, problem)) }
            if case .signIn(let screen) = mode, screen.firstFactorOf != nil {
                return handle(SecondFactorProgress.failed(provider: provider, problem))
            }
            providerErrors[provider] = problem.message
            guard case .signIn(let screen) = mode, screen.provider == provider else { return [] }
            mode = .list
            message = Message(text: "Sign-in failed: \(problem.message)", isError: true)
            return []
        case .cancelled:
            if case .signIn = mode { mode = .list }
            return []
        default:
            guard case .signIn(var screen) = mode else { return [] }
            screen.apply(progress, now: now)
            mode = .signIn(screen)
            return []
        }
    }

    private mutating func handle(_ progress: SecondFactorProgress) -> [Effect] {
        if case .signIn(let screen) = mode, let firebase = screen.firstFactorOf {
            switch progress {
            case .firstFactorSignIn, .enrolled: break
            case .failed(let provider, _) where provider != firebase: break
            default:
                // The first factor's sign-in is over (passed, or failed): back to the firebase screens.
                mode = .secondFactor(SecondFactorScreen(provider: firebase, purpose: .signIn))
            }
        }
        switch progress {
        case .firstFactorSignIn(let name):
            // Kept when it is already up: p or d restarted the sign-in in another mode, or the SSH chooser picked one.
            if case .signIn(let screen) = mode, screen.firstFactorOf != nil, screen.provider == name { return [] }
            guard case .secondFactor(let screen) = mode, screen.purpose == .signIn else { return [] }
            mode = .signIn(SignInScreen(provider: name, startedAt: now, firstFactorOf: screen.provider))
            return []
        case .firstFactorPassed(let name):
            guard case .secondFactor(var screen) = mode else { return [] }
            screen.step = .working("Signed in at \(provider(named: name)?.displayName ?? name); contacting the sign-in service…")
            mode = .secondFactor(screen)
            return []
        case .enrolled(let account):
            upsert(account)
            if case .secondFactor = mode { mode = .list }
            selected = .account(account.id)
            message = Message(
                text: "Enrolled the phone for \(account.label)\(account.secondFactor.map { " (second factor: \($0))" } ?? "").",
                isError: false)
            return [.loadAccounts]
        case .failed(let provider, let problem):
            guard case .secondFactor(var screen) = mode, screen.provider == provider else {
                providerErrors[provider] = problem.message
                return []
            }
            if screen.purpose == .signIn { providerErrors[provider] = problem.message }
            screen.apply(progress, now: now)
            mode = .secondFactor(screen)
            return []
        default:
            guard case .secondFactor(var screen) = mode else { return [] }
            screen.apply(progress, now: now)
            mode = .secondFactor(screen)
            return []
        }
    }

    // MARK: - Keys

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
        case .confirmSignOut(let id):
            mode = .list
            guard key == .character("y") || key == .character("Y"), let account = account(id) else {
                message = Message(text: "Kept \(account(id)?.label ?? id.subject).", isError: false)
                return []
            }
            activity[id] = .signingOut
            return [.signOut(account.selector)]
        case .signIn(var screen):
            return handleSignInKey(key, screen: &screen)
        case .secondFactor(var screen):
            let outcome = screen.handle(key, now: now)
            mode = .secondFactor(screen)
            switch outcome {
            case .none: return []
            case .answer(let answer): return [.answer(answer)]
            case .enroll(let phoneNumber, let displayName):
                guard case .enroll(let id) = screen.purpose, let account = account(id) else { return [.beep] }
                return [.enrollPhone(account.selector, phoneNumber: phoneNumber, displayName: displayName)]
            case .cancel:
                mode = .list
                message = Message(text: screen.purpose == .signIn ? "Sign-in cancelled." : "Enrollment cancelled.", isError: false)
                return [.cancelSignIn]
            case .restart:
                mode = .secondFactor(SecondFactorScreen(provider: screen.provider, purpose: .signIn))
                return [.startSignIn(provider: screen.provider)]
            case .close:
                mode = .list
                return []
            case .beep: return [.beep]
            }
        case .list:
            if isEditingFilter { return editFilter(key) }
            return handleListKey(key)
        }
    }

    /// Keys on the browser, paste and device screens.
    private mutating func handleSignInKey(_ key: Key, screen: inout SignInScreen) -> [Effect] {
        defer { if case .signIn = mode { mode = .signIn(screen) } }
        if key == .escape {
            mode = .list
            message = Message(text: "Sign-in cancelled.", isError: false)
            return screen.choosingMode ? [] : [.cancelSignIn]
        }
        if screen.choosingMode {
            let chosen: OAuthClient.RedirectMode
            switch key {
            case .enter, .character("b"): chosen = .loopback
            case .character("p"): chosen = .paste
            case .character("d"): chosen = .device
            default: return [.beep]
            }
            screen = screen.restarted(mode: chosen, now: now)
            return [.startSignIn(provider: screen.signInProvider, mode: chosen)]
        }
        if var paste = screen.paste, !paste.submitted {
            if paste.entry.edit(key) {
                screen.paste = paste
                return []
            }
            guard key == .enter, !paste.entry.isEmpty else { return [.beep] }
            paste.submitted = true
            screen.paste = paste
            return [.answer(.redirectURL(paste.entry.text))]
        }
        // The demo browser plays the person at the demo's own provider (`latchkey demo` only).
        if demo != nil, key == .character("a"), let visit = screen.demoVisit {
            message = Message(text: "The demo browser is signing in as the demo user…", isError: false)
            return [.demoBrowse(visit)]
        }
        // While the browser round trip runs, p and d switch to the other ways to sign in.
        if screen.isLoopback, key == .character("p") || key == .character("d") {
            let chosen: OAuthClient.RedirectMode = key == .character("p") ? .paste : .device
            screen = screen.restarted(mode: chosen, now: now)
            return [.cancelSignIn, .startSignIn(provider: screen.signInProvider, mode: chosen)]
        }
        return []
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
            guard let provider = selectedProvider else { return [.beep] }
            providerErrors[provider.name] = nil
            message = nil
            if case .secondFactor = provider.signIn {
                if isRemote, let first = provider.firstFactorProvider.flatMap(self.provider(named:)), first.redirectMode == .loopback {
                    mode = .signIn(SignInScreen(provider: first.name, startedAt: now, choosingMode: true, firstFactorOf: provider.name))
                    return []
                }
                mode = .secondFactor(SecondFactorScreen(provider: provider.name, purpose: .signIn))
                return [.startSignIn(provider: provider.name)]
            }
            if isRemote && provider.redirectMode == .loopback {
                mode = .signIn(SignInScreen(provider: provider.name, startedAt: now, choosingMode: true))
                return []
            }
            mode = .signIn(SignInScreen(provider: provider.name, startedAt: now))
            return [.startSignIn(provider: provider.name)]
        case .character("e"):
            guard let account = selectedAccountOrOnlyOne, provider(named: account.id.provider)?.enrollsPhones == true else {
                message = Message(text: "e enrolls a phone on a signed-in firebase account; select one first.", isError: true)
                return [.beep]
            }
            mode = .secondFactor(SecondFactorScreen(provider: account.id.provider, purpose: .enroll(account.id)))
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
