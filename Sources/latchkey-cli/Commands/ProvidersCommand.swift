import ArgumentParser
import Foundation
import LatchkeyAccounts
import LatchkeyBroker
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySupport
import LatchkeyTUI
import LatchkeyVault

struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List the configured identity providers and any errors in their files.",
        subcommands: [ListProviders.self, CheckProviders.self, ListPresets.self, AddProvider.self, RemoveProvider.self],
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
            let directory = ProviderCatalog.searchDirectories(environment: ProcessInfo.processInfo.environment)[0]
            Output.info(
                "No providers configured. `latchkey providers presets` lists the presets and `latchkey providers add NAME` copies one into \(directory); see latchkey-providers(5)."
            )
        }
        for entry in ProvidersReport(catalog).providers {
            Output.result(
                "\(entry.name)\t\(entry.kind)\t\(entry.issuer ?? "-")\t\(entry.redirect == "device" ? "device" : entry.redirectURI ?? "-")")
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

struct ListPresets: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets", abstract: "List the provider presets installed with Latchkey, ready to copy with `providers add`.")

    func run() async throws {
        let installed = ProviderPresets(environment: ProcessInfo.processInfo.environment)
        if installed.presets.isEmpty {
            Output.info("No presets found in \(installed.directories.joined(separator: ", ")); \(ProviderPresets.whereToFind).")
        }
        for preset in installed.presets { Output.result("\(preset.name)\t\(preset.displayName ?? "-")\t\(preset.file)") }
    }
}

struct AddProvider: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract:
            "Copy a preset (or write an OpenID provider known by its issuer) into your providers.d directory, never over an existing file; a file that would not load is not written."
    )

    @Argument(
        help: "The preset's name, as `providers presets` lists it; none with --issuer for a plain OpenID provider.",
        completion: Completions.presets)
    var preset: String?
    @Option(name: .customLong("client-id"), help: "The client ID you registered at the provider, written into the copy.")
    var clientID: String?
    @Option(help: "The issuer, replacing the preset's (a realm, a tenant), or of a provider added without a preset.")
    var issuer: String?
    @Option(help: "The new provider's name (its file name); the preset's name by default.")
    var name: String?

    func validate() throws {
        if preset == nil && (issuer == nil || name == nil) {
            throw ValidationError("name a preset, or give --issuer and --name for an OpenID provider without one")
        }
    }

    func run() async throws {
        try await Failure.reporting {
            let environment = ProcessInfo.processInfo.environment
            let directories = ProviderCatalog.searchDirectories(environment: environment)
            var draft = ProviderDraft(preset: preset, name: name ?? preset ?? "", issuer: issuer, clientID: clientID)
            switch await draft.offersRegistration(engine: OAuthEngine(transport: LiveHTTPTransport())) {
            case .success(let offered): draft.registersDynamically = offered
            case .failure(let error):
                Output.info("Could not read the issuer's discovery document (\(Failure.describe(error))); the file asks for a client_id.")
            }
            let file = try ProviderPresets(environment: environment).write(draft, into: directories[0], alongside: directories)
            Output.info("Added \(file).")
            if draft.registersDynamically {
                Output.info(
                    "The provider registers clients itself (RFC 7591): `latchkey login \(draft.name)` registers Latchkey there and signs in."
                )
            } else if clientID == nil {
                Output.info(
                    "Next: register a client as the comments in \(file) say, set its client_id there, then `latchkey login \(draft.name)`.")
            } else {
                Output.info(
                    "Next: check the comments in \(file) for anything else to set (an issuer, a tenant), then `latchkey login \(draft.name)`."
                )
            }
        }
    }
}

struct RemoveProvider: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract:
            "Delete a provider file from your providers.d directory, and the client Latchkey registered at the provider (RFC 7592); sign its accounts out first."
    )

    @Argument(help: "The provider's name.", completion: Completions.providers) var name: String

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        try await Failure.reporting {
            let directory = ProviderCatalog.searchDirectories(environment: ProcessInfo.processInfo.environment)[0]
            let removal = try await options.context().service.removeProvider(named: name, from: directory)
            switch removal.registration {
            case nil: break
            case .success(.deleted): Output.info("Deleted the client Latchkey registered at \(name).")
            case .success(.unsupported):
                Output.info("\(name) offers no way to delete the client Latchkey registered there (RFC 7592); its administrator can.")
            case .failure(let error):
                Output.info(
                    "\(name) did not delete the client Latchkey registered there: \(Failure.describe(error)); its administrator can.")
            }
            Output.info("Removed \(removal.file).")
        }
    }
}

/// `latchkey providers --json`.
struct ProvidersReport: Encodable {
    struct Entry: Encodable {
        var name, displayName, kind, source: String
        /// `null` for `firebase` providers, which receive no redirect.
        var redirectURI: String?
        /// How the authorization response comes back; `null` for `firebase` providers.
        var redirect: String?
        var issuer: String?
        /// `grant`, `registration`, `par` and `dpop` as the file sets them (defaults included);
        /// `null` for `firebase` providers.
        var grant, registration, par, dpop: String?

        enum CodingKeys: String, CodingKey {
            case name, kind, redirect, source, issuer, grant, registration, par, dpop
            case displayName = "display_name"
            case redirectURI = "redirect_uri"
        }

        /// Every key is always present, `null` where a kind has no value, so scripts can tell a
        /// provider without a redirect from a misspelt key.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(displayName, forKey: .displayName)
            try container.encode(kind, forKey: .kind)
            try container.encode(redirectURI, forKey: .redirectURI)
            try container.encode(redirect, forKey: .redirect)
            try container.encode(issuer, forKey: .issuer)
            try container.encode(source, forKey: .source)
            try container.encode(grant, forKey: .grant)
            try container.encode(registration, forKey: .registration)
            try container.encode(par, forKey: .par)
            try container.encode(dpop, forKey: .dpop)
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
            let choices = provider.protocolChoices
            return Entry(
                name: provider.name, displayName: provider.displayName, kind: provider.kindName, source: provider.sourceFile,
                redirectURI: provider.redirectURITemplate, redirect: provider.redirectMode?.rawValue, issuer: provider.issuer,
                grant: choices?.grant.rawValue, registration: choices?.registration.rawValue,
                par: choices?.pushedAuthorization.rawValue, dpop: choices?.proofOfPossession.rawValue)
        }
        errors = catalog.errors.map { FileError(file: $0.file, line: $0.line, field: $0.field, message: $0.message) }
    }
}
