import Foundation
import LatchkeyEssentials
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
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                found[name] = Preset(name: name, file: file, displayName: try? parser.parse(text, file: file).get().displayName)
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

    /// Copies the preset `name` into `directory` as `name.toml` (mode 0600: a `client_secret` may
    /// be added to it), with `client_id` filled in when given, and returns the new file's path.
    /// An existing file is never replaced: it may hold the person's own edits.
    public func add(_ name: String, clientID: String?, into directory: String) throws(ProviderPresetError) -> String {
        let preset = try preset(named: name)
        guard var text = try? String(contentsOfFile: preset.file, encoding: .utf8) else { throw .unreadable(file: preset.file) }
        if let clientID {
            guard !clientID.isEmpty, !clientID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .invalidClientID
            }
            guard let filled = Self.fillingIn(clientID: clientID, in: text) else { throw .clientIDNotEmpty(file: preset.file) }
            text = filled
        }
        let file = directory + "/" + preset.name + ".toml"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotWrite(file: file, reason: "cannot create \(directory)")
        }
        // O_EXCL: no other writer's file is replaced between a check and the write.
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw .exists(file: file) }
            throw .cannotWrite(file: file, reason: String(cString: strerror(errno)))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            unlink(file)
            throw .cannotWrite(file: file, reason: String(describing: error))
        }
        return file
    }

    /// `text` with its `client_id = ""` line set to `clientID` (a TOML basic string), or `nil`
    /// when there is no such line: a preset whose `client_id` is set already is not overwritten.
    static func fillingIn(clientID: String, in text: String) -> String? {
        var lines = text.components(separatedBy: "\n")
        guard let index = lines.firstIndex(where: { $0.filter { !$0.isWhitespace } == #"client_id="""# }) else { return nil }
        let escaped = clientID.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        lines[index] = "client_id = \"\(escaped)\""
        return lines.joined(separator: "\n")
    }
}

/// Why `latchkey providers add` could not copy a preset.
public enum ProviderPresetError: LatchkeyError, Equatable {
    case unknown(name: String, known: [String], directories: [String])
    case unreadable(file: String)
    case invalidClientID
    case clientIDNotEmpty(file: String)
    case exists(file: String)
    case cannotWrite(file: String, reason: String)

    public var category: FailureCategory {
        switch self {
        case .unknown, .unreadable: return .notFound
        case .invalidClientID, .clientIDNotEmpty: return .usage
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
        case .invalidClientID:
            return "--client-id must not be empty or contain control characters"
        case .clientIDNotEmpty(let file):
            return "\(file) has no empty client_id = \"\" line to fill in; add the preset without --client-id and edit the copy"
        case .exists(let file):
            return "\(file) already exists and is left as it is; edit it, or remove it to start again from the preset"
        case .cannotWrite(let file, let reason):
            return "cannot write \(file): \(reason)"
        }
    }
}
