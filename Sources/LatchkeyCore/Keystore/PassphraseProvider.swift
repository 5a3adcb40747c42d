import CLatchkeySys
import Foundation
public import LatchkeyVault

/// Supplies the vault passphrase when the key is not already at hand.
public protocol PassphraseProvider: Sendable {
    /// `creating` is true when a new vault is about to be made (an interactive prompt asks twice).
    func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret
}

/// `LATCHKEY_PASSPHRASE_FILE`: the passphrase read from a file, for scripts.
///
/// The passphrase never travels in argv or the environment (both are visible to other processes
/// through /proc); a file with mode 0600 is readable by its owner only.
public struct PassphraseFile: PassphraseProvider {
    public let path: String

    public init(path: String) { self.path = path }

    public func passphrase(forVault vault: String, creating: Bool) throws(KeystoreError) -> Secret {
        do {
            return try SecretFile.read(path)
        } catch {
            throw .passphraseFile(path: path, reason: error.reason)
        }
    }
}

/// A secret kept in a file of its own, on one line, that no one but its owner may read:
/// `LATCHKEY_PASSPHRASE_FILE` and a provider's `client_secret_file`.
enum SecretFile {
    struct Unusable: Error {
        /// Why, for the caller's error message; never the file's content.
        var reason: String
    }

    static func read(_ path: String) throws(Unusable) -> Secret {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Unusable(reason: String(cString: strerror(errno))) }
        guard info.st_mode & 0o077 == 0 else { throw Unusable(reason: "it is readable by other users; run `chmod 600 \(path)`") }
        guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
            throw Unusable(reason: "it cannot be read as UTF-8 text")
        }
        // One line ending, LF or CRLF ("\r\n" is a single Character, so one removeLast drops both).
        if text.hasSuffix("\n") || text.hasSuffix("\r\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw Unusable(reason: "it is empty") }
        return Secret(text)
    }
}
