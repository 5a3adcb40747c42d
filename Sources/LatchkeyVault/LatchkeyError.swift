/// What kind of failure an error is, so the command line can map it to one exit status
/// and the screen can decide whether retrying makes sense.
public enum FailureCategory: Sendable, Equatable {
    /// The input does not follow the command's format (a request git would never send).
    case usage
    /// A provider file is broken; fix the file named in the message.
    case configuration
    /// No such provider, or no signed-in account matches; sign in first.
    case notFound
    /// The provider could not be reached, timed out, or the person cancelled; retrying may work.
    case unavailable
    /// The provider's answer was rejected or was an OAuth error; nothing was stored.
    case rejected
    /// The keystore is locked, the passphrase is wrong, or the vault is unreadable or unsafe.
    case keystore
    /// A file the person asked for could not be created: it exists already, or its directory refuses it.
    case cannotCreate
    /// A bug or an environment problem Latchkey did not expect.
    case unexpected
}

/// Every error Latchkey shows a person: a message to act on and a category.
///
/// Messages name fields and files, never secret values.
public protocol LatchkeyError: Error, CustomStringConvertible, Sendable {
    var category: FailureCategory { get }
}
