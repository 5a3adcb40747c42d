import ArgumentParser
import Foundation
import LatchkeyProviders

/// What the shells' completion scripts (`--generate-completion-script`, installed by
/// scripts/install) ask for on Tab, through `latchkey ---completion …`.
///
/// Only names read from providers.d files: completing is quick and never opens the vault or asks
/// for its passphrase, so account names (which live only in the encrypted vault) are not offered.
/// Every candidate is a valid provider name and is quoted for the shell asking, because bash's
/// script hands the list to `compgen -W`, which expands each word: a file named `$(cmd).toml`
/// would otherwise run `cmd` on Tab.
enum Completions {
    /// Provider names, for the `PROVIDER[:ACCOUNT]` selectors.
    static let providers = CompletionKind.custom { _, _, prefix in
        let directories = ProviderCatalog.searchDirectories(environment: ProcessInfo.processInfo.environment)
        return candidates(ProviderCatalog.load(directories: directories).providers.map(\.name), prefix: prefix)
    }

    /// Preset names, for `providers add`.
    static let presets = CompletionKind.custom { _, _, prefix in
        candidates(ProviderPresets(environment: ProcessInfo.processInfo.environment).presets.map(\.name), prefix: prefix)
    }

    /// `names` starting with `prefix`, valid as provider names, quoted for the requesting shell.
    static func candidates(_ names: [String], prefix: String, shell: CompletionShell? = CompletionShell.requesting) -> [String] {
        names.filter { $0.hasPrefix(prefix) && Provider.isValidName($0) }.map { shell == .bash ? quotedForCompgen($0) : $0 }
    }

    /// `name` with a backslash before every character that is not a letter or digit, so the
    /// expansion `compgen -W` applies gives `name` back unchanged.
    static func quotedForCompgen(_ name: String) -> String {
        String(name.flatMap { $0.isASCII && ($0.isLetter || $0.isNumber) ? [$0] : ["\\", $0] })
    }
}
