@testable import LatchkeyKeystore
@testable import LatchkeyVault

/// A passphrase provider that answers without a prompt and counts nothing: tests only need the value.
struct FixedPassphrase: PassphraseProvider {
    var value = "correct horse battery staple"

    func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        Secret(value)
    }
}
