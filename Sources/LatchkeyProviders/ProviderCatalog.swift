import Foundation
package import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// Every provider found in the providers.d directories, with every error found on the way.
///
/// A broken file never hides the others: it contributes errors, the rest still load.
public struct ProviderCatalog: Sendable {
    public private(set) var providers: [Provider]
    public private(set) var errors: [ProviderFileError]
    /// The policy files as they were just before these were read, when the catalog was loaded
    /// from the directories (`Composition.loadCatalog`): what the agent compares to know it must
    /// read them again, and what the launcher's copies are fingerprinted with.
    package var sources: PolicySnapshot?

    public init(providers: [Provider], errors: [ProviderFileError]) {
        self.providers = providers
        self.errors = errors
    }

    /// The directories searched, most important first (`PolicyFiles.providerDirectories`, which
    /// the launcher uses too).
    public static func searchDirectories(environment: [String: String]) -> [String] {
        PolicyFiles.providerDirectories { environment[$0] }
    }

    /// Loads every `*.toml` file; for a name found in several directories the first one wins.
    public static func load(directories: [String], explicitDirectoryRequired: Bool = false) -> ProviderCatalog {
        let fileManager = FileManager.default
        var seenNames: Set<String> = []
        var providers: [Provider] = []
        var errors: [ProviderFileError] = []
        let parser = ProviderFileParser()

        for directory in directories {
            guard let entries = try? fileManager.contentsOfDirectory(atPath: directory) else {
                if explicitDirectoryRequired {
                    errors.append(
                        ProviderFileError(file: directory, message: "cannot read this directory (LATCHKEY_PROVIDERS_DIR points at it)"))
                }
                continue
            }
            for entry in entries.sorted() where entry.hasSuffix(".toml") {
                let path = directory + "/" + entry
                let name = String(entry.dropLast(".toml".count))
                guard !seenNames.contains(name) else { continue }
                seenNames.insert(name)
                let text: String
                switch TextFile.read(path) {
                case .success(let read): text = read
                case .failure(let problem):
                    errors.append(ProviderFileError(file: path, message: problem.message))
                    continue
                }
                switch parser.parse(text, file: path) {
                case .success(let provider): providers.append(provider)
                case .failure(let fileErrors): errors.append(contentsOf: fileErrors.errors)
                }
            }
        }
        return rejectingSharedRedirectPaths(providers: providers, errors: errors)
    }

    /// Two providers sharing a redirect path would defeat the mix-up defence, so neither loads.
    static func rejectingSharedRedirectPaths(providers: [Provider], errors: [ProviderFileError]) -> ProviderCatalog {
        // Only OAuth providers receive redirects; a firebase sign-in has none.
        func redirectPath(_ provider: Provider) -> String? {
            switch provider.kind {
            case .oidc(let client), .oauth2(let client): return client.redirectPath
            case .firebase: return nil
            }
        }
        let byPath = Dictionary(grouping: providers.filter { redirectPath($0) != nil }, by: { redirectPath($0) ?? "" })
        var kept: [Provider] = []
        var allErrors = errors
        for provider in providers {
            guard let path = redirectPath(provider), let sharing = byPath[path], sharing.count > 1 else {
                kept.append(provider)
                continue
            }
            let others = sharing.filter { $0.sourceFile != provider.sourceFile }.map(\.sourceFile).joined(separator: ", ")
            let field = "redirect_path"
            let line = ProviderFileParser.Context(
                file: provider.sourceFile, text: (try? String(contentsOfFile: provider.sourceFile, encoding: .utf8)) ?? ""
            ).line(of: field)
            allErrors.append(
                ProviderFileError(
                    file: provider.sourceFile, line: line, field: field,
                    message: "\(path) is also the redirect path of \(others); each provider needs its own (mix-up defence)"
                ))
        }
        return ProviderCatalog(providers: kept, errors: allErrors)
    }

    /// The provider called `name`, or an error that says whether it is missing or broken.
    public func provider(named name: String) throws(ProviderLookupError) -> Provider {
        if let provider = providers.first(where: { $0.name == name }) { return provider }
        let broken = errors.filter { URL(fileURLWithPath: $0.file).deletingPathExtension().lastPathComponent == name }
        if !broken.isEmpty { throw .broken(name: name, errors: broken) }
        throw .unknown(name: name, known: providers.map(\.name))
    }
}

/// Why `latchkey login NAME` could not find provider NAME.
public enum ProviderLookupError: LatchkeyError, Equatable {
    case unknown(name: String, known: [String])
    case broken(name: String, errors: [ProviderFileError])

    public var category: FailureCategory {
        switch self {
        case .unknown: return .notFound
        case .broken: return .configuration
        }
    }

    public var description: String {
        switch self {
        case .unknown(let name, let known):
            let list = known.isEmpty ? "none are configured; see latchkey-providers(5)" : "known: " + known.joined(separator: ", ")
            return "no provider named \"\(TerminalText.sanitized(name, maxLength: 80))\" (\(list))"
        case .broken(let name, let errors):
            return "provider \"\(name)\" cannot be used until its file is fixed:\n" + errors.map { "  \($0)" }.joined(separator: "\n")
        }
    }
}
