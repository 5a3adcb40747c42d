import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// The provider files Latchkey ships (providers.d/ in the source tree, installed in
/// `PREFIX/share/latchkey/providers.d`): templates to copy into a providers.d directory and
/// complete, never loaded as providers themselves.
///
/// They are not providers yet: each lacks its `client_id`, and some name a placeholder issuer.
/// Loading them all would list providers nobody configured, and a person's own copy under
/// another name would share its preset's redirect path, which makes both refuse to load.
public struct ProviderPresets: Sendable {
    public struct Preset: Sendable, Equatable {
        /// The file name without `.toml`, the name of the provider a copy becomes.
        public var name: String
        public var file: String
        /// The file's `display_name`, or `nil` when the file does not parse.
        public var displayName: String?
        /// The file's issuer, which a copy may replace (a realm, a tenant); `nil` when it has none.
        public var issuer: String?

        public init(name: String, file: String, displayName: String?, issuer: String? = nil) {
            self.name = name
            self.file = file
            self.displayName = displayName
            self.issuer = issuer
        }
    }

    /// Where presets come from, for messages that found none.
    public static let whereToFind =
        "scripts/install puts them in PREFIX/share/latchkey/providers.d, and providers.d/ in the source tree holds them too"

    /// The directories searched, most important first.
    public let directories: [String]
    /// Every preset, by name; for a name found in several directories the first one wins.
    public let presets: [Preset]

    public init(directories: [String]) {
        self.directories = directories
        var found: [String: Preset] = [:]
        let parser = ProviderFileParser()
        for directory in directories {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for entry in entries where entry.hasSuffix(".toml") {
                let name = String(entry.dropLast(".toml".count))
                // A name that could not name a provider is no preset: it would reach a shell on Tab.
                guard Provider.isValidName(name), found[name] == nil else { continue }
                let file = directory + "/" + entry
                let text = (try? TextFile.read(file).get()) ?? ""
                let parsed = try? parser.parse(text, file: file).get()
                found[name] = Preset(name: name, file: file, displayName: parsed?.displayName, issuer: parsed?.issuer)
            }
        }
        presets = found.values.sorted { $0.name < $1.name }
    }

    /// The presets of this environment and of the install the running executable belongs to.
    public init(environment: [String: String]) {
        self.init(directories: Self.searchDirectories(environment: environment, executablePath: RunningExecutable.path()))
    }

    /// `$XDG_DATA_HOME/latchkey/providers.d`, then the running install's own
    /// `PREFIX/share/latchkey/providers.d` (so `~/.local` and `/opt` installs find theirs), then
    /// `latchkey/providers.d` in each of `$XDG_DATA_DIRS`; duplicates dropped.
    ///
    /// `executablePath` is the real path of latchkey-cli (`PREFIX/libexec/latchkey/latchkey-cli`
    /// when installed, a build directory otherwise, which has no prefix).
    public static func searchDirectories(environment: [String: String], executablePath: String?) -> [String] {
        let lookup = { (name: String) in environment[name] }
        var bases = [XDGDirectories.data(lookup)]
        if let prefix = executablePath.flatMap(installPrefix(executablePath:)) { bases.append(prefix + "/share/latchkey") }
        bases += XDGDirectories.dataDirectories(lookup)
        var seen: Set<String> = []
        return bases.map { $0 + "/providers.d" }.filter { seen.insert($0).inserted }
    }

    /// `PREFIX` for `PREFIX/libexec/latchkey/latchkey-cli` or `PREFIX/bin/latchkey-cli`; `nil` for
    /// any other place (a build directory), which has no share directory to look in.
    static func installPrefix(executablePath: String) -> String? {
        guard let directory = RunningExecutable.parent(of: executablePath) else { return nil }
        for suffix in ["/libexec/latchkey", "/bin"] where directory.hasSuffix(suffix) {
            return String(directory.dropLast(suffix.count))
        }
        return nil
    }

    /// The preset called `name`, or an error listing those there are and where they were looked for.
    public func preset(named name: String) throws(ProviderPresetError) -> Preset {
        if let preset = presets.first(where: { $0.name == name }) { return preset }
        throw .unknown(name: name, known: presets.map(\.name), directories: directories)
    }

    /// Copies the preset `name` into `directory` as `name.toml`, with `client_id` filled in when
    /// given, and returns the new file's path (`latchkey providers add PRESET`).
    public func add(_ name: String, clientID: String?, into directory: String, alongside directories: [String] = [])
        throws(ProviderPresetError) -> String
    {
        try write(ProviderDraft(preset: name, name: name, clientID: clientID), into: directory, alongside: directories)
    }

    /// Writes `draft` into `directory` as `NAME.toml` (mode 0600: a `client_secret` may be added to
    /// it) and returns its path; only a file that loads, alongside the providers of `directories`
    /// (a shared redirect path is refused as `providers check` refuses it), is written. An
    /// existing file is never replaced: it may hold the person's own edits.
    public func write(_ draft: ProviderDraft, into directory: String, alongside directories: [String] = [])
        throws(ProviderPresetError) -> String
    {
        let text = try text(of: draft)
        let file = directory + "/" + draft.name + ".toml"
        try Self.check(text, as: file, alongside: directories)
        return try Self.create(file, text: text, in: directory)
    }

    /// The provider file `draft` becomes: the preset's text, or a blank one, with the draft's
    /// issuer and client ID filled in.
    func text(of draft: ProviderDraft) throws(ProviderPresetError) -> String {
        guard Provider.isValidName(draft.name) else { throw .invalidName(TerminalText.sanitized(draft.name, maxLength: 80)) }
        var text: String
        var source = draft.name
        if let name = draft.preset {
            let preset = try preset(named: name)
            guard let read = try? String(contentsOfFile: preset.file, encoding: .utf8) else { throw .unreadable(file: preset.file) }
            text = read
            source = preset.file
            if draft.name != name {
                // A second copy of a preset (another realm, another tenant) needs its own redirect path.
                text = Self.setting("redirect_path", to: "/oauth2redirect/\(draft.name)", in: text) ?? text
            }
        } else {
            guard draft.issuer != nil else { throw .issuerNeeded }
            text = Self.blank(draft)
        }
        if let issuer = draft.issuer {
            guard Self.isOneLine(issuer) else { throw .invalidField("issuer") }
            guard let filled = Self.setting("issuer", to: issuer, in: text) else { throw .noIssuer(preset: source) }
            text = filled
        }
        if let clientID = draft.clientID {
            guard !clientID.isEmpty, Self.isOneLine(clientID) else { throw .invalidClientID }
            guard let filled = Self.fillingIn(clientID: clientID, in: text) else { throw .clientIDNotEmpty(file: source) }
            text = filled
        }
        return text
    }

    /// The file as `providers check` would see it: parsed, then among the other providers.
    static func check(_ text: String, as file: String, alongside directories: [String]) throws(ProviderPresetError) {
        let provider: Provider
        switch ProviderFileParser().parse(text, file: file) {
        case .success(let parsed): provider = parsed
        case .failure(let errors): throw .invalid(errors.errors)
        }
        let others = ProviderCatalog.load(directories: directories).providers.filter { $0.name != provider.name }
        let clashes = ProviderCatalog.rejectingSharedRedirectPaths(providers: others + [provider], errors: []).errors
        let mine = clashes.filter { $0.file == file }
        if !mine.isEmpty { throw .invalid(mine) }
    }

    /// Creates `file` exclusively (O_EXCL: no other writer's file is replaced between a check and
    /// the write) and writes `text` into it.
    private static func create(_ file: String, text: String, in directory: String) throws(ProviderPresetError) -> String {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotWrite(file: file, reason: "cannot create \(directory)")
        }
        do {
            try ExclusiveFile.create(file, text: text)
        } catch {
            switch error {
            case .exists: throw .exists(file: file)
            case .cannotWrite(let reason): throw .cannotWrite(file: file, reason: reason)
            }
        }
        return file
    }

    /// A provider file for a provider known only by its issuer (an OpenID provider, or what
    /// `latchkey mcp add` discovered); with `registersDynamically`, one whose server registers
    /// clients itself (RFC 7591).
    static func blank(_ draft: ProviderDraft) -> String {
        let name = draft.name
        let what =
            draft.mcpURL == nil
            ? "an OpenID Connect provider, added by its issuer." : "the authorization server of an MCP server, added by `latchkey mcp add`."
        let comment =
            draft.registersDynamically
            ? """
            # Its server registers clients itself (RFC 7591): Latchkey registers one at the first
            # sign-in and keeps it in the vault. See latchkey-providers(5).
            """
            : """
            # Register a native (public) client there with the redirect URI
            #     http://127.0.0.1/oauth2redirect/\(name)
            # (any port; PKCE S256), then set client_id below. See latchkey-providers(5).
            """
        var lines = [
            "# \(name) - \(what)", comment, "display_name = \(tomlString(name))", "kind = \(draft.isOpenID ? "\"oidc\"" : "\"oauth2\"")",
            "issuer = \"\"", draft.registersDynamically ? "registration = \"dynamic\"" : "client_id = \"\"",
            "scopes = " + tomlArray(draft.scopes ?? ["openid", "profile", "email"]),
        ]
        if !draft.resources.isEmpty { lines.append("resources = " + tomlArray(draft.resources)) }
        if let mcpURL = draft.mcpURL { lines.append("mcp_url = \(tomlString(mcpURL))") }
        if !draft.loopbackPorts.isEmpty {
            lines.append("loopback_port = [" + draft.loopbackPorts.map(String.init).joined(separator: ", ") + "]")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func tomlArray(_ values: [String]) -> String {
        "[" + values.map(tomlString).joined(separator: ", ") + "]"
    }

    private static func isOneLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// `text` with its top-level `key = …` line replaced by `key = "value"` (a TOML basic string),
    /// or `nil` when it has no such line.
    static func setting(_ key: String, to value: String, in text: String) -> String? {
        var lines = text.components(separatedBy: "\n")
        guard
            let index = lines.firstIndex(where: { line in
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                return trimmed.hasPrefix(key) && trimmed.dropFirst(key.count).drop { $0 == " " || $0 == "\t" }.hasPrefix("=")
            })
        else { return nil }
        lines[index] = "\(key) = \(tomlString(value))"
        return lines.joined(separator: "\n")
    }

    package static func tomlString(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `text` with its `client_id = ""` line set to `clientID` (a TOML basic string), or `nil`
    /// when there is no such line: a preset whose `client_id` is set already is not overwritten.
    static func fillingIn(clientID: String, in text: String) -> String? {
        var lines = text.components(separatedBy: "\n")
        guard let index = lines.firstIndex(where: { $0.filter { !$0.isWhitespace } == #"client_id="""# }) else { return nil }
        lines[index] = "client_id = \(tomlString(clientID))"
        return lines.joined(separator: "\n")
    }
}

/// A provider file to write: from a preset, or for an OpenID provider known by its issuer, with
/// the fields a person fills in (`latchkey providers add`, the screen's form).
public struct ProviderDraft: Sendable, Equatable {
    /// The preset copied; `nil` for a blank OpenID provider, which needs `issuer`.
    public var preset: String?
    /// The new provider's name, which is its file name.
    public var name: String
    /// Replaces the preset's issuer (a realm, a tenant).
    public var issuer: String?
    public var clientID: String?
    /// `registration = "dynamic"` instead of a `client_id` to fill in: for a provider without a
    /// preset whose discovery lists a `registration_endpoint` (`offersRegistration`).
    public var registersDynamically = false
    /// `kind`: `"oidc"`, or `"oauth2"` for a server found by RFC 8414 discovery alone.
    public var isOpenID = true
    /// `scopes`; the blank file's OpenID scopes when `nil`.
    public var scopes: [String]?
    /// `resources` (RFC 8707).
    public var resources: [String] = []
    /// `mcp_url`: the MCP server the provider signs in for.
    public var mcpURL: String?
    /// `loopback_port`: for a server that matches redirect URIs port and all.
    public var loopbackPorts: [Int] = []

    public init(preset: String?, name: String, issuer: String? = nil, clientID: String? = nil) {
        self.preset = preset
        self.name = name
        self.issuer = issuer
        self.clientID = clientID
    }
}

/// Why a provider file could not be added from a preset.
public enum ProviderPresetError: LatchkeyError, Equatable {
    case unknown(name: String, known: [String], directories: [String])
    case unreadable(file: String)
    case invalidName(String)
    case invalidClientID
    case invalidField(String)
    case clientIDNotEmpty(file: String)
    case noIssuer(preset: String)
    case issuerNeeded
    /// The file would not load (`providers check`'s errors for it); it was not written.
    case invalid([ProviderFileError])
    case exists(file: String)
    case cannotWrite(file: String, reason: String)

    public var category: FailureCategory {
        switch self {
        case .unknown, .unreadable: return .notFound
        case .invalidName, .invalidClientID, .invalidField, .clientIDNotEmpty, .noIssuer, .issuerNeeded: return .usage
        case .invalid: return .configuration
        case .exists, .cannotWrite: return .cannotCreate
        }
    }

    public var description: String {
        switch self {
        case .unknown(let name, let known, let directories):
            let searched = "searched " + directories.joined(separator: ", ")
            guard !known.isEmpty else {
                return "no presets are installed (\(searched)); \(ProviderPresets.whereToFind)"
            }
            let list = known.joined(separator: ", ")
            return "no preset named \"\(TerminalText.sanitized(name, maxLength: 80))\" (presets: \(list); \(searched))"
        case .unreadable(let file):
            return "cannot read the preset \(file) as UTF-8 text"
        case .invalidName(let name):
            return "\"\(name)\" cannot name a provider: use letters, digits, '.', '_' and '-', not starting with '.' or '-'"
        case .invalidClientID:
            return "the client ID must not be empty or contain control characters"
        case .invalidField(let field):
            return "the \(field) must be one line without control characters"
        case .noIssuer(let preset):
            return "\(preset) takes no issuer (its endpoints are fixed); leave the issuer out"
        case .issuerNeeded:
            return "a provider added without a preset needs its issuer (--issuer https://…)"
        case .invalid(let errors):
            return "the provider file would not load, so it was not written:\n" + errors.map { "  \($0)" }.joined(separator: "\n")
        case .clientIDNotEmpty(let file):
            return "\(file) has no empty client_id = \"\" line to fill in; add the preset without --client-id and edit the copy"
        case .exists(let file):
            return "\(file) already exists and is left as it is; edit it, or remove it to start again from the preset"
        case .cannotWrite(let file, let reason):
            return "cannot write \(file): \(reason)"
        }
    }
}

extension ProviderDraft {
    /// The provider the file of this draft without a preset would load as, for its discovery
    /// before the file is written; `nil` when it would not load.
    package func blankProvider() -> OAuthProvider? {
        guard preset == nil, let text = try? ProviderPresets(directories: []).text(of: self),
            case .success(let provider) = ProviderFileParser().parse(text, file: name + ".toml")
        else { return nil }
        switch provider.kind {
        case .oidc(let client), .oauth2(let client): return OAuthProvider(provider, client: client)
        default: return nil
        }
    }
}
