import ArgumentParser
import LatchkeyCore
import LatchkeyTUI

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List the configured identity providers and any errors in their files.",
        subcommands: [ListProviders.self, CheckProviders.self],
        defaultSubcommand: ListProviders.self)
}

struct ListProviders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List providers (the default).")

    @Flag(help: "Print JSON on stdout.") var json = false

    func run() async throws {
        let catalog = Composition().catalog
        if json {
            try Output.json(ProvidersReport(catalog))
            return
        }
        if catalog.providers.isEmpty && catalog.errors.isEmpty {
            Output.info(
                "No providers configured. Copy a file from the presets (providers.d/ in the source tree) into ~/.config/latchkey/providers.d/; see latchkey-providers(5)."
            )
        }
        for entry in ProvidersReport(catalog).providers {
            Output.result(
                "\(entry.name)\t\(entry.kind)\t\(entry.issuer ?? "-")\t\(entry.redirect == "device" ? "device" : entry.redirectURI)")
        }
        for error in catalog.errors { Output.error(error.description) }
    }
}

struct CheckProviders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Check every provider file; exit 65 when any has an error.")

    func run() async throws {
        let catalog = Composition().catalog
        for error in catalog.errors { Output.info(error.description) }
        guard catalog.errors.isEmpty else { throw ExitCode(Failure.exitCode(for: .configuration)) }
        Output.info("\(catalog.providers.count) provider(s), no errors.")
    }
}

/// `latchkey providers --json`.
struct ProvidersReport: Encodable {
    struct Entry: Encodable {
        var name, displayName, kind, redirect, redirectURI, source: String
        var issuer: String?

        enum CodingKeys: String, CodingKey {
            case name, kind, redirect, source, issuer
            case displayName = "display_name"
            case redirectURI = "redirect_uri"
        }
    }

    struct FileError: Encodable {
        var file: String
        var line: Int?
        var field: String?
        var message: String
    }

    var providers: [Entry]
    var errors: [FileError]

    init(_ catalog: ProviderCatalog) {
        providers = catalog.providers.map { provider in
            let summary = ProviderSummary(provider)
            return Entry(
                name: provider.name, displayName: provider.displayName, kind: provider.kindName, redirect: summary.redirectMode.rawValue,
                redirectURI: summary.redirectURITemplate, source: provider.sourceFile, issuer: summary.issuer)
        }
        errors = catalog.errors.map { FileError(file: $0.file, line: $0.line, field: $0.field, message: $0.message) }
    }
}
