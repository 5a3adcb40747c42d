public import LatchkeyKeystore
public import LatchkeyVault
import Synchronization

/// The agent's passphrase source: the terminal's prompt while the agent starts, and never after.
/// A request must not wait on a prompt in a terminal nobody may be watching; once running, the
/// agent uses the key it holds, or one `latchkey unlock` left in the kernel keyring.
public final class StartupPassphrase: PassphraseProvider {
    private let prompt: any PassphraseProvider
    private let asking = Atomic(true)

    public init(_ prompt: any PassphraseProvider) {
        self.prompt = prompt
    }

    /// From now on, nobody is asked.
    public func close() { asking.store(false, ordering: .relaxed) }

    public func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        guard asking.load(ordering: .relaxed) else {
            throw .locked("the agent asks for the passphrase only when it starts; run `latchkey unlock`, or restart the agent")
        }
        return try prompt.passphrase(forVault: path, creating: creating)
    }
}
