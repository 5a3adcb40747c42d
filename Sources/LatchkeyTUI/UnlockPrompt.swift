public import LatchkeyVault

/// The masked vault passphrase prompt: what was typed (shown only as a count of dots) and, for
/// a new vault, the second entry that must repeat the first.
public struct UnlockPrompt: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        case editing
        case submit(Secret)
        case quit
    }

    /// A new vault is being made: ask twice, and insist on a minimum length.
    public let creating: Bool
    public let vaultPath: String
    public private(set) var error: String?
    /// True while the second (repeat) entry is being typed.
    public private(set) var isRepeating = false
    private var entry = Secret("")
    private var first = Secret("")
    /// A new vault's passphrase needs at least this many characters (as on the command line).
    public static let minimumLength = 8

    public init(vaultPath: String, creating: Bool) {
        self.vaultPath = vaultPath
        self.creating = creating
    }

    /// How many characters were typed: the only thing about the entry that is drawn.
    public var typedCount: Int { entry.exposedValue.count }

    public var prompt: String {
        if !creating { return "Passphrase for the vault" }
        return isRepeating ? "Repeat the new passphrase" : "New vault passphrase"
    }

    mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .character(let character) where !character.isNewline:
            entry = Secret(entry.exposedValue + String(character))
        case .backspace:
            entry = Secret(String(entry.exposedValue.dropLast()))
        case .escape:
            return .quit
        case .enter:
            return submit()
        default:
            break
        }
        return .editing
    }

    private mutating func submit() -> Outcome {
        let typed = entry
        entry = Secret("")
        guard !typed.exposedValue.isEmpty else {
            error = "Type the passphrase, or press Esc to leave."
            return .editing
        }
        guard creating else {
            error = nil
            return .submit(typed)
        }
        if !isRepeating {
            guard typed.exposedValue.count >= Self.minimumLength else {
                error = "The passphrase must have at least \(Self.minimumLength) characters."
                return .editing
            }
            first = typed
            isRepeating = true
            error = nil
            return .editing
        }
        guard typed == first else {
            restart(error: "The two passphrases differ; type the new one again.")
            return .editing
        }
        error = nil
        return .submit(typed)
    }

    /// Back to the first entry with `error` shown (a wrong passphrase, a mismatch).
    mutating func restart(error: String) {
        self.error = error
        entry = Secret("")
        first = Secret("")
        isRepeating = false
    }
}
