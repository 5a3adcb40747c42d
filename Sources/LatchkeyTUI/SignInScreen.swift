public import Foundation
public import LatchkeyProviders
public import LatchkeySecondFactor
public import LatchkeyVault

/// The screen of a sign-in or a phone enrollment started from the list: one step per step of
/// `SignInFlow` that the person sees or answers, set from `SignInProgress` and answered with
/// `PromptAnswer`s.
public struct SignInScreen: Sendable, Equatable {
    public enum Purpose: Sendable, Equatable {
        /// Signing in to this provider: a new account, or one of its accounts signed in again.
        case signIn(provider: String)
        /// Signing this account in again: only it may come back.
        case signInAgain(AccountSummary.ID)
        /// Enrolling a phone for this signed-in account.
        case enroll(AccountSummary.ID)

        /// The provider whose sign-in or account this is.
        public var provider: String {
            switch self {
            case .signIn(let provider): return provider
            case .signInAgain(let id), .enroll(let id): return id.provider
            }
        }

        /// The sign-in this screen runs (and runs again on a restart), for `mode`.
        func signIn(mode: OAuthClient.RedirectMode? = nil) -> Effect {
            switch self {
            case .signIn(let provider): return .startSignIn(provider: provider, mode: mode)
            case .signInAgain(let id): return .startSignIn(provider: id.provider, mode: mode, account: AccountSummary.selector(of: id))
            case .enroll: return .beep
            }
        }
    }

    public enum Step: Sendable, Equatable {
        /// Waiting for the provider or the sign-in service; the text says for what.
        case working(String)
        /// Over SSH a browser started here would open on this machine: browser, paste or device code?
        case choosingMode
        /// The browser was sent to `url`; the listener waits at `redirectURI` on `listeningOn`.
        /// `browserProblem` says why no browser could be started, when none could.
        case browser(url: URL, redirectURI: String, listeningOn: [String], browserProblem: String?)
        /// The core waits for the final redirect URL, typed into `fields[0]`; `submitted` once sent.
        case paste(url: URL, redirectURI: String, submitted: Bool)
        case device(DeviceCode, expiresAt: Date)
        /// Email and masked password.
        case credentials
        /// One line per enrolled factor, exactly as the server described it.
        case choosingHint([SecondFactorHint])
        /// The 6-digit code for `hint`.
        case code(SecondFactorHint)
        /// A new phone: E.164 number and a name for it.
        case enrollForm
        /// Stopped; what to do next follows `problem.recovery`.
        case failed(SignInProblem)
    }

    /// What a key asks the app to do.
    enum Outcome: Equatable {
        case none
        case answer(PromptAnswer)
        case enroll(phoneNumber: String, displayName: String?)
        /// Stop the running sign-in and go back to the list.
        case cancel
        /// Cancel and start this screen's sign-in again in `mode` (p or d while the browser is out).
        case switchMode(OAuthClient.RedirectMode)
        /// Start the sign-in again from the first factor.
        case restart
        /// Back to the list (nothing is running any more).
        case close
        case demo(DemoVisit)
        case beep
    }

    public var purpose: Purpose
    public var startedAt: Date
    /// The redirect mode asked for on this screen (p or d); nil: the provider's own.
    public var mode: OAuthClient.RedirectMode?
    /// The OpenID provider whose sign-in runs as this firebase sign-in's first factor, while it runs.
    public var firstFactor: String?
    public var step: Step
    /// Email + password, phone + name, the code, or the pasted URL.
    public var fields: [TextEntry] = []
    public var focus = 0
    public var choice = 0
    /// When the last code was sent: the resend countdown runs from here.
    public var sentAt: Date?
    /// Why a code was sent again, from the server's answer.
    public var notice: String?
    /// The last attempt's error, shown above the entry.
    public var problem: SignInProblem?
    public var canResend = false
    /// Once the person took part in a step on this screen (a form, a factor), a failure stays
    /// here with what to do next; a browser sign-in that failed goes back to the list.
    public var keepsFailure = false

    /// Seconds before another code can be asked for (SMS is slow and counted against a quota).
    public static let resendDelay: TimeInterval = 30
    public static let codeLength = 6

    static func digitsOnly(_ character: Character) -> Bool { character.isASCII && character.isNumber }
    static func phoneCharacter(_ character: Character) -> Bool { digitsOnly(character) || character == "+" }

    public init(purpose: Purpose, startedAt: Date, mode: OAuthClient.RedirectMode? = nil) {
        self.purpose = purpose
        self.startedAt = startedAt
        self.mode = mode
        switch purpose {
        case .signIn, .signInAgain:
            step = .working(mode == .device ? "Asking the provider for a device code…" : "Contacting the provider…")
        case .enroll:
            step = .enrollForm
            fields = [TextEntry(maximumLength: 16, allowed: Self.phoneCharacter), TextEntry(maximumLength: 40)]
            keepsFailure = true
        }
    }

    /// E.164: a plus, a non-zero country digit, at most 15 digits in all.
    static func isE164(_ text: String) -> Bool {
        guard text.first == "+" else { return false }
        let digits = text.dropFirst()
        return (8...15).contains(digits.count) && digits.allSatisfy(digitsOnly) && digits.first != "0"
    }

    /// The browser round trip runs on this machine (so `p` and `d` can switch away from it).
    var isLoopback: Bool {
        if case .browser = step { return true }
        return false
    }

    /// What the demo browser can do for the person here, once the provider has answered: approve
    /// the device code, or sign in at the authorization URL the listener waits on.
    var demoVisit: DemoVisit? {
        switch step {
        case .device(let device, _):
            return URL(string: device.verificationURI).map { .device(verificationURI: $0, userCode: device.userCode) }
        case .browser(let url, _, _, _): return .authorization(url)
        default: return nil
        }
    }

    /// The last attempt's problem is shown under every step but the failure, which says it itself.
    var showsProblem: Bool {
        if case .failed = step { return false }
        return true
    }

    /// Seconds left before `r` sends a new code; 0 when it can.
    func resendWait(now: Date) -> Int {
        guard let sentAt else { return 0 }
        return max(0, -Int(wholeSeconds: now.timeIntervalSince(sentAt) - Self.resendDelay))
    }

    // MARK: - Progress

    mutating func apply(_ progress: SignInProgress, now: Date) {
        switch progress {
        case .redirectModeNeeded:
            step = .choosingMode
        case .authorizationStarted(let url, let redirectURI, let listeningOn):
            step = .browser(url: url, redirectURI: redirectURI, listeningOn: listeningOn, browserProblem: nil)
        case .browserUnavailable(let reason):
            guard case .browser(let url, let redirectURI, let listeningOn, _) = step else { return }
            step = .browser(url: url, redirectURI: redirectURI, listeningOn: listeningOn, browserProblem: reason)
        case .deviceCode(let code):
            step = .device(code, expiresAt: now.addingTimeInterval(TimeInterval(code.expiresIn)))
        case .pasteRequested(let url, let redirectURI):
            step = .paste(url: url, redirectURI: redirectURI, submitted: false)
            fields = [TextEntry()]
        case .clientRegistrationCorrected(let provider, let problem):
            step = .working("Registering Latchkey at \(provider): \(problem).")
        case .federatedSignInStarted(let provider):
            firstFactor = provider
            keepsFailure = true
        case .federatedSignInPassed(let provider):
            firstFactor = nil
            step = .working("Signed in at \(provider); contacting the sign-in service…")
        case .credentialsNeeded:
            step = .credentials
            fields = [TextEntry(maximumLength: 320), TextEntry(maximumLength: 4096)]
            focus = 0
            keepsFailure = true
        case .chooseHint(let hints):
            step = .choosingHint(hints)
            choice = 0
            keepsFailure = true
        case .codeSent(_, let notice):
            sentAt = now
            self.notice = notice
            problem = nil
        case .codeNeeded(let hint, let problem, let canResend):
            step = .code(hint)
            fields = [TextEntry(maximumLength: Self.codeLength, allowed: Self.digitsOnly)]
            focus = 0
            self.problem = problem
            self.canResend = canResend
            keepsFailure = true
        case .failed(let problem):
            step = .failed(problem)
        case .finished:
            break
        }
    }

    // MARK: - Keys

    mutating func handle(_ key: Key, now: Date, demo: Bool) -> Outcome {
        switch step {
        case .working:
            return key == .escape ? .cancel : .none
        case .choosingMode:
            switch key {
            case .enter, .character("b"): return chosen(.loopback)
            case .character("p"): return chosen(.paste)
            case .character("d"): return chosen(.device)
            case .escape: return .cancel
            default: return .beep
            }
        case .browser:
            if key == .escape { return .cancel }
            if demo, key == .character("a"), let visit = demoVisit { return .demo(visit) }
            if key == .character("p") { return .switchMode(.paste) }
            if key == .character("d") { return .switchMode(.device) }
            return .none
        case .device:
            if key == .escape { return .cancel }
            if demo, key == .character("a"), let visit = demoVisit { return .demo(visit) }
            return .none
        case .paste(let url, let redirectURI, let submitted):
            if key == .escape { return .cancel }
            guard !submitted else { return .none }
            if fields[0].edit(key) { return .none }
            guard key == .enter, !fields[0].isEmpty else { return .beep }
            step = .paste(url: url, redirectURI: redirectURI, submitted: true)
            return .answer(.redirectURL(fields[0].text))
        case .failed(let problem):
            let restartable = problem.recovery == .restart || problem.recovery == .resendCode
            if key == .enter, restartable, purpose.signIn() != .beep { return .restart }
            return .close
        case .choosingHint(let hints):
            return choose(key, hints: hints)
        case .credentials, .enrollForm, .code:
            return editForm(key, now: now)
        }
    }

    private mutating func chosen(_ mode: OAuthClient.RedirectMode) -> Outcome {
        self.mode = mode
        step = .working(mode == .device ? "Asking the provider for a device code…" : "Contacting the provider…")
        return .answer(.redirectMode(mode))
    }

    private mutating func choose(_ key: Key, hints: [SecondFactorHint]) -> Outcome {
        switch key {
        case .up, .character("k"): choice = max(0, choice - 1)
        case .down, .character("j"): choice = min(hints.count - 1, choice + 1)
        case .character(let digit) where digit.isASCII && digit.isNumber:
            guard let number = digit.wholeNumberValue, hints.indices.contains(number - 1) else { return .beep }
            choice = number - 1
            return pick(hints[choice])
        case .enter: return pick(hints[choice])
        case .escape: return .cancel
        default: return .beep
        }
        return .none
    }

    private mutating func pick(_ hint: SecondFactorHint) -> Outcome {
        step = .working(hint.kind == .phone ? "Sending a code to \(hint.phoneNumber ?? "the phone")…" : "Preparing the code check…")
        return .answer(.hint(id: hint.id))
    }

    private mutating func editForm(_ key: Key, now: Date) -> Outcome {
        if case .code = step, key == .character("r") {
            guard canResend, resendWait(now: now) == 0 else { return .beep }
            step = .working("Sending a new code…")
            return .answer(.code(.resend))
        }
        if fields.indices.contains(focus), fields[focus].edit(key) { return .none }
        switch key {
        case .escape:
            return .cancel
        case .tab, .down:
            focus = (focus + 1) % max(fields.count, 1)
        case .up:
            focus = (focus + fields.count - 1) % max(fields.count, 1)
        case .enter:
            if focus < fields.count - 1 {
                focus += 1
                return .none
            }
            return submit()
        default:
            return .beep
        }
        return .none
    }

    private mutating func submit() -> Outcome {
        switch step {
        case .credentials:
            let email = fields[0].text.trimmingCharacters(in: .whitespaces)
            guard !email.isEmpty, !fields[1].isEmpty else {
                problem = .init(message: "Type the email and the password.", recovery: .retryCode)
                focus = email.isEmpty ? 0 : 1
                return .beep
            }
            let password = fields[1].value
            fields[1].clear()
            problem = nil
            step = .working("Checking the password…")
            return .answer(.credentials(email: email, password: password))
        case .code(let hint):
            guard fields[0].count == Self.codeLength else {
                problem = .init(message: "The code has \(Self.codeLength) digits.", recovery: .retryCode)
                return .beep
            }
            let code = fields[0].value
            fields[0].clear()
            step = .working(hint.kind == .phone ? "Checking the code…" : "Checking the code from the app…")
            return .answer(.code(.code(code)))
        case .enrollForm:
            let phone = fields[0].text
            guard Self.isE164(phone) else {
                problem = .init(
                    message: "Type the number in E.164 form: + country code and number, e.g. +15555550100.", recovery: .retryCode)
                focus = 0
                return .beep
            }
            let name = fields[1].text.trimmingCharacters(in: .whitespaces)
            problem = nil
            step = .working("Sending a code to \(PhoneNumberMask.maskedIfFull(phone))…")
            return .enroll(phoneNumber: phone, displayName: name.isEmpty ? nil : name)
        default:
            return .none
        }
    }
}
