public import LatchkeyKeystore
public import LatchkeyVault
import Synchronization

/// The vault passphrase as typed into the screen's prompt; until then, the vault stays locked.
public final class TypedPassphrase: PassphraseProvider {
    private let typed = Mutex<Secret?>(nil)

    public init() {}

    func set(_ passphrase: Secret) { typed.withLock { $0 = passphrase } }

    public func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        guard let passphrase = typed.withLock({ $0 }) else { throw .locked("type the passphrase in the screen") }
        return passphrase
    }
}
