import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// Sets, in config.toml, which account a provider means in one directory (the screen's `m`): the
/// line `provider = "account"` in the `[directories."PATH"]` table, replaced when there and
/// added otherwise, the rest of the file kept byte for byte. The new text is read back as
/// config.toml is read before it replaces the file, atomically, so a mistake never leaves a
/// config.toml every command then refuses.
public enum DirectoryMappingEdit {
    /// Writes the mapping and returns the file's new text.
    @discardableResult
    public static func map(
        _ provider: String, to account: String, in directory: String, configFile: String, environment: [String: String]
    ) throws -> String {
        guard Provider.isValidName(provider), !account.isEmpty, !account.contains(where: { $0.isNewline || $0 == "\t" }),
            directory.hasPrefix("/"), !directory.contains(where: { $0.isNewline || $0 == "\t" })
        else {
            throw DirectoryMappingError.notAMapping(provider: provider, account: account, directory: directory)
        }
        var text = ""
        switch TextFile.read(configFile) {
        case .success(let read): text = read
        case .failure(.missing): break
        case .failure(let problem): throw DirectoryMappingError.unreadable(path: configFile, problem: problem.message)
        }
        let edited = setting(provider, to: account, in: directory, text: text)
        _ = try LatchkeyConfiguration.checked(edited, path: configFile, environment: environment)
        let folder = (configFile as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try AtomicFile.replace(configFile, with: Array(edited.utf8), mode: 0o600)
        return edited
    }

    /// `text` with the mapping set: in the directory's table when it has one (its line for the
    /// provider replaced, or a line added after its header), else in a new table at the end.
    static func setting(_ provider: String, to account: String, in directory: String, text: String) -> String {
        let header = "[directories.\(ProviderPresets.tomlString(directory))]"
        let assignment = "\(provider) = \(ProviderPresets.tomlString(account))"
        var lines = text.isEmpty ? [] : text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == header }) else {
            if let last = lines.last, last.isEmpty { lines.removeLast() }
            if !lines.isEmpty { lines.append("") }
            return (lines + [header, assignment, ""]).joined(separator: "\n")
        }
        var end = start + 1
        while end < lines.count, !lines[end].trimmingCharacters(in: .whitespaces).hasPrefix("[") { end += 1 }
        if let existing = (start + 1..<end).first(where: { index in
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            return line.hasPrefix(provider) && line.dropFirst(provider.count).trimmingCharacters(in: .whitespaces).hasPrefix("=")
        }) {
            lines[existing] = assignment
        } else {
            lines.insert(assignment, at: start + 1)
        }
        return lines.joined(separator: "\n")
    }
}

/// Why a directory mapping was not written: config.toml was left as it was.
public enum DirectoryMappingError: LatchkeyError, Equatable {
    /// Not a provider name, an account and an absolute directory on one line each.
    case notAMapping(provider: String, account: String, directory: String)
    /// config.toml exists but cannot be read (`TextFile`'s problem).
    case unreadable(path: String, problem: String)

    public var category: FailureCategory { .configuration }

    public var description: String {
        switch self {
        case .notAMapping(let provider, let account, let directory):
            return
                "cannot map \(TerminalText.sanitized(provider, maxLength: 100)) to \(TerminalText.sanitized(account, maxLength: 100)) in \(TerminalText.sanitized(directory, maxLength: 300)): not a provider, account and directory"
        case .unreadable(let path, let problem):
            return "\(path) \(problem)"
        }
    }
}
