public import Foundation
public import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeySupport
public import LatchkeyVault

/// A profile of the AWS config file whose `credential_process` runs `latchkey aws-credential`:
/// what `latchkey aws-config` prints or adds.
public struct AWSProfile: Sendable, Equatable {
    public var name: String
    /// `credential_process`'s words, quoted for the POSIX shell splitting the AWS CLI and SDKs
    /// apply to it (botocore's `shlex.split`).
    public var command: [String]
    public var region: String?

    /// Checks the name, the words and `options` (as `aws-credential` would, so a profile that
    /// cannot work is never written).
    public init(
        name: String, command: [String], region: String?, checking options: AWSRoleOptions, settings: AWSSettings, provider: String
    ) throws(AWSConfigError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ Self.isSafe($0) && $0 != UInt8(ascii: "/") }) else {
            throw .invalidProfileName(name)
        }
        // A line break would end the INI line early and let what follows set keys of its own.
        if let word = command.first(where: { $0.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) }) {
            throw .controlCharacter(word)
        }
        do {
            _ = try options.checked(settings: settings, provider: provider, environment: [:])
        } catch {
            throw .credential(error)
        }
        self.name = name
        self.command = command
        self.region = region
    }

    /// The stanza, as the AWS config file holds it (without the last line break).
    public var stanza: String {
        var lines = ["[profile \(name)]", "credential_process = " + command.map(Self.quoted).joined(separator: " ")]
        if let region { lines.append("region = \(region)") }
        return lines.joined(separator: "\n")
    }

    /// The AWS config file: `AWS_CONFIG_FILE`, else `~/.aws/config`, as the AWS CLI reads it.
    public static func configFile(environment: [String: String]) throws(AWSConfigError) -> String {
        if let file = environment["AWS_CONFIG_FILE"], !file.isEmpty { return file }
        guard let home = environment["HOME"], !home.isEmpty else { throw .noHome }
        return home + "/.aws/config"
    }

    /// Appends the stanza to `file` (created, with its directory, when missing), after copying
    /// it aside (`FileBackup`); returns the backup's path, `nil` when there was no file. A
    /// profile of the same name is refused, never replaced.
    @discardableResult
    public func add(to file: String, now: Date = Date()) throws(AWSConfigError) -> String? {
        var existing = ""
        switch TextFile.read(file, maximumBytes: 1 << 20) {
        case .success(let text): existing = text
        case .failure(.missing): break
        case .failure(let problem): throw .unreadable(file, problem.message)
        }
        if Self.sections(of: existing).contains("profile \(name)") || (name == "default" && Self.sections(of: existing).contains("default"))
        {
            throw .profileExists(name, file: file)
        }
        var backup: String?
        if !existing.isEmpty {
            do {
                backup = try FileBackup.copy(file, now: now)
            } catch {
                throw .cannotWrite(error.path, error.reason)
            }
        } else {
            try? FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let separator = existing.isEmpty ? "" : existing.hasSuffix("\n\n") ? "" : existing.hasSuffix("\n") ? "\n" : "\n\n"
        do {
            try AtomicFile.replace(file, with: Array((existing + separator + stanza + "\n").utf8))
        } catch {
            throw .cannotWrite(file, error.description)
        }
        return backup
    }

    /// Each section header's name, its words joined by one space (`[ profile  x ]` is `profile x`).
    static func sections(of text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else { return nil }
            return trimmed[trimmed.index(after: trimmed.startIndex)..<close].split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
    }

    /// `word` as a POSIX shell reads it back: as it is when every byte is safe, else in single
    /// quotes (a quote inside becomes `'\''`).
    static func quoted(_ word: String) -> String {
        if !word.isEmpty && word.utf8.allSatisfy(isSafe) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func isSafe(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "_-.,:/=@+".utf8.contains(byte)
    }
}

/// Why `latchkey aws-config` wrote nothing.
public enum AWSConfigError: LatchkeyError, Equatable {
    case invalidProfileName(String)
    case controlCharacter(String)
    case credential(AWSCredentialError)
    case noHome
    case unreadable(String, String)
    case profileExists(String, file: String)
    case cannotWrite(String, String)

    public var category: FailureCategory {
        switch self {
        case .invalidProfileName, .controlCharacter: return .usage
        case .credential(let error): return error.category
        case .noHome: return .notFound
        case .unreadable: return .configuration
        case .profileExists: return .cannotCreate
        case .cannotWrite: return .cannotCreate
        }
    }

    public var description: String {
        let s = { (text: String) in TerminalText.sanitized(text, maxLength: 200) }
        switch self {
        case .invalidProfileName(let name):
            return "profile name \"\(s(name))\" must be 1 to 64 letters, digits and _-.,:=@+"
        case .controlCharacter(let word):
            return "\"\(s(word))\" holds a control character, which the AWS config file cannot hold on one line"
        case .credential(let error):
            return error.description
        case .noHome:
            return "HOME is not set, so there is no ~/.aws/config; set AWS_CONFIG_FILE to the file to change"
        case .unreadable(let file, let problem):
            return "\(s(file)) \(problem)"
        case .profileExists(let name, let file):
            return "\(s(file)) already has a profile \(s(name)); choose another --profile, or remove that one first"
        case .cannotWrite(let file, let reason):
            return "cannot write \(s(file)): \(s(reason)); nothing was changed"
        }
    }
}
