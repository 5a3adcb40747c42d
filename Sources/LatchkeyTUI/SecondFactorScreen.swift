public import Foundation
public import LatchkeyCore
import LatchkeyVault

/// The firebase sign-in and phone enrollment screens: first factor, factor chooser, code entry.
public struct SecondFactorScreen: Sendable, Equatable {
    public enum Purpose: Sendable, Equatable {
        case signIn
        /// Enrolling a phone for this signed-in account.
        case enroll(AccountSummary.ID)
    }

    public enum Step: Sendable, Equatable {
        /// Waiting for the server; the text says for what.
        case working(String)
        /// Email and masked password.
        case credentials
        /// One line per enrolled factor, exactly as the server described it.
        case choosing([SecondFactorHint])
        /// The 6-digit code for `hint`.
        case code(SecondFactorHint)
        /// A new phone: E.164 number and a name for it.
        case enrollForm
        /// Stopped; what to do next follows `problem.recovery`.
        case failed(SecondFactorProgress.Problem)
    }

    /// What a key asks the app to do.
    enum Outcome: Equatable {
        case none
        case answer(PromptAnswer)
        case enroll(phoneNumber: String, displayName: String?)
        /// Esc: stop the running flow and go back to the list.
        case cancel
        /// Start the sign-in again from the first factor.
        case restart
        /// Back to the list (nothing is running any more).
        case close
        case beep
    }

    public var provider: String
    public var purpose: Purpose
    public var step: Step
    /// email + password, or phone + name, or the code.
    public var fields: [TextEntry] = []
    public var focus = 0
    public var choice = 0
    /// When the last code was sent: the resend countdown runs from here.
    public var sentAt: Date?
    /// Why a code was sent again, from the server's answer.
    public var notice: String?
    /// The last attempt's error, shown above the entry.
    public var problem: SecondFactorProgress.Problem?
    public var canResend = false

    /// Seconds before another code can be asked for (SMS is slow and counted against a quota).
    public static let resendDelay: TimeInterval = 30
    public static let codeLength = 6

    static func digitsOnly(_ character: Character) -> Bool { character.isASCII && character.isNumber }
    static func phoneCharacter(_ character: Character) -> Bool { digitsOnly(character) || character == "+" }

    public init(provider: String, purpose: Purpose) {
        self.provider = provider
        self.purpose = purpose
        switch purpose {
        case .signIn:
            step = .working("Contacting the sign-in service…")
        case .enroll:
            step = .enrollForm
            fields = [TextEntry(maximumLength: 16, allowed: Self.phoneCharacter), TextEntry(maximumLength: 40)]
        }
    }

    /// E.164: a plus, a non-zero country digit, at most 15 digits in all.
    static func isE164(_ text: String) -> Bool {
        guard text.first == "+" else { return false }
        let digits = text.dropFirst()
        return (8...15).contains(digits.count) && digits.allSatisfy(digitsOnly) && digits.first != "0"
    }

    /// The flow ended (its failure is the whole screen).
    var hasStopped: Bool {
        if case .failed = step { return true }
        return false
    }

    /// Seconds left before `r` sends a new code; 0 when it can.
    func resendWait(now: Date) -> Int {
        guard let sentAt else { return 0 }
        return max(0, -Int(wholeSeconds: now.timeIntervalSince(sentAt) - Self.resendDelay))
    }

    // MARK: - Progress

    mutating func apply(_ progress: SecondFactorProgress, now: Date) {
        switch progress {
        case .credentialsNeeded:
            step = .credentials
            fields = [TextEntry(maximumLength: 320), TextEntry(maximumLength: 4096)]
            focus = 0
        case .chooseHint(let hints):
            step = .choosing(hints)
            choice = 0
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
        case .failed(_, let problem):
            step = .failed(problem)
        case .enrolled, .firstFactorSignIn, .firstFactorPassed:
            break
        }
    }

    // MARK: - Keys

    mutating func handle(_ key: Key, now: Date) -> Outcome {
        switch step {
        case .working:
            return key == .escape ? .cancel : .none
        case .failed(let problem):
            if key == .enter, problem.recovery == .restart || problem.recovery == .resendCode, purpose == .signIn { return .restart }
            return .close
        case .choosing(let hints):
            return choose(key, hints: hints)
        case .credentials, .enrollForm, .code:
            return editForm(key, now: now)
        }
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
