import CLatchkeySys
import Foundation
import LatchkeyEssentials
import LatchkeySupport
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
