import Foundation
import LatchkeyProviders

/// Adding a provider from the screen (`+`): pick a preset (or an OpenID provider known only by
/// its issuer), fill in its fields, and the file is written only if it loads, as
/// `latchkey providers add` writes it.
public struct AddProviderScreen: Sendable, Equatable {
    /// A preset as the chooser lists it.
    public struct Choice: Sendable, Equatable {
        /// `nil`: an OpenID provider added by its issuer, from no preset.
        public var preset: String?
        public var label: String
        /// The preset's issuer, offered for editing; `nil` for a preset with fixed endpoints.
        public var issuer: String?
        public var takesIssuer: Bool

        public init(preset: String?, label: String, issuer: String?, takesIssuer: Bool) {
            self.preset = preset
            self.label = label
            self.issuer = issuer
            self.takesIssuer = takesIssuer
        }

        /// The last choice: a provider by issuer, no preset.
        static let byIssuer = Choice(preset: nil, label: "OpenID provider by its issuer (no preset)", issuer: nil, takesIssuer: true)
    }

    public enum Step: Sendable, Equatable {
        /// Waiting for the installed presets.
        case loading
        case choosing([Choice])
        /// Name, issuer (when the choice takes one) and client ID.
        case form(Choice)
        /// The file is being checked and written.
        case writing(Choice)
    }

    /// What a key asks the app to do.
    enum Outcome: Equatable {
        case none
        case write(ProviderDraft)
        case close
        case beep
    }

    public var step: Step = .loading
    public var choice = 0
    public var fields: [TextEntry] = []
    public var focus = 0
    /// Why the last attempt was not written (the file's errors, a name in use…).
    public var problem: String?

    public init() {}

    /// The presets arrived; the blank OpenID provider is always offered last.
    mutating func presetsLoaded(_ presets: [Choice]) {
        step = .choosing(presets + [.byIssuer])
        choice = 0
    }

    /// The write failed: back to the form with the reason.
    mutating func failed(_ reason: String) {
        guard case .writing(let chosen) = step else { return }
        step = .form(chosen)
        problem = reason
    }

    // MARK: - Keys

    mutating func handle(_ key: Key) -> Outcome {
        switch step {
        case .loading, .writing:
            return key == .escape ? .close : .none
        case .choosing(let choices):
            switch key {
            case .up, .character("k"): choice = max(0, choice - 1)
            case .down, .character("j"): choice = min(choices.count - 1, choice + 1)
            case .enter: open(choices[choice])
            case .escape: return .close
            default: return .beep
            }
            return .none
        case .form(let chosen):
            if fields[focus].edit(key) { return .none }
            switch key {
            case .escape: return .close
            case .tab, .down: focus = (focus + 1) % fields.count
            case .up: focus = (focus + fields.count - 1) % fields.count
            case .enter:
                guard focus == fields.count - 1 else {
                    focus += 1
                    return .none
                }
                return submit(chosen)
            default: return .beep
            }
            return .none
        }
    }

    /// The form for `chosen`: its name, then its issuer when it takes one, then the client ID.
    private mutating func open(_ chosen: Choice) {
        var name = TextEntry(maximumLength: 64, allowed: { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) })
        for character in chosen.preset ?? "" { _ = name.edit(.character(character)) }
        var issuer = TextEntry(maximumLength: 2048)
        for character in chosen.issuer ?? "" { _ = issuer.edit(.character(character)) }
        fields = chosen.takesIssuer ? [name, issuer, TextEntry(maximumLength: 512)] : [name, TextEntry(maximumLength: 512)]
        focus = 0
        problem = nil
        step = .form(chosen)
    }

    private mutating func submit(_ chosen: Choice) -> Outcome {
        let name = fields[0].text
        guard Provider.isValidName(name) else {
            problem = "The name is the file name: letters, digits, '.', '_' and '-'."
            focus = 0
            return .beep
        }
        let issuer = chosen.takesIssuer ? fields[1].text.trimmingCharacters(in: .whitespaces) : nil
        if chosen.preset == nil && issuer?.isEmpty != false {
            problem = "An OpenID provider without a preset needs its issuer."
            focus = 1
            return .beep
        }
        let clientID = fields[fields.count - 1].text.trimmingCharacters(in: .whitespaces)
        problem = nil
        step = .writing(chosen)
        return .write(
            ProviderDraft(
                preset: chosen.preset, name: name, issuer: issuer == chosen.issuer ? nil : issuer,
                clientID: clientID.isEmpty ? nil : clientID))
    }
}
