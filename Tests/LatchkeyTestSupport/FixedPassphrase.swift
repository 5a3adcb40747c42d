public import LatchkeyKeystore
public import LatchkeyVault

/// A passphrase provider that answers without a prompt and counts nothing: tests only need the value.
public struct FixedPassphrase: PassphraseProvider {
    public var value: String

    public init(value: String = "correct horse battery staple") { self.value = value }

    public func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        Secret(value)
    }
}
