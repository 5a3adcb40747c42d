import ArgumentParser
import Foundation
import LatchkeyCore

/// What the shells' completion scripts (`--generate-completion-script`, installed by
/// scripts/install) ask for on Tab, through `latchkey ---completion …`.
///
/// Only names read from providers.d files: completing is quick and never opens the vault or asks
/// for its passphrase, so account names (which live only in the encrypted vault) are not offered.
enum Completions {
    /// Provider names, for the `PROVIDER[:ACCOUNT]` selectors.
    static let providers = CompletionKind.custom { _, _, prefix in
        let directories = ProviderCatalog.searchDirectories(environment: ProcessInfo.processInfo.environment)
        return ProviderCatalog.load(directories: directories).providers.map(\.name).filter { $0.hasPrefix(prefix) }
    }

    /// Preset names, for `providers add`.
    static let presets = CompletionKind.custom { _, _, prefix in
        ProviderPresets(environment: ProcessInfo.processInfo.environment).presets.map(\.name).filter { $0.hasPrefix(prefix) }
    }
}
