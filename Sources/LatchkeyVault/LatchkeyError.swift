/// What kind of failure an error is, so the command line can map it to one exit status
/// and the screen can decide whether retrying makes sense.
public enum FailureCategory: String, Sendable, Equatable, Codable {
    /// The input does not follow the command's format (a request git would never send).
    case usage
    /// A provider file is broken; fix the file named in the message.
    case configuration
    /// No such provider, or no signed-in account matches; sign in first.
    case notFound = "not_found"
    /// The provider could not be reached, timed out, or the person cancelled; retrying may work.
    case unavailable
    /// The provider's answer was rejected or was an OAuth error; nothing was stored.
    case rejected
    /// The keystore is locked, the passphrase is wrong, or the vault is unreadable or unsafe.
    case keystore
    /// A file the person asked for could not be created: it exists already, or its directory refuses it.
    case cannotCreate = "cannot_create"
    /// A bug or an environment problem Latchkey did not expect.
    case unexpected

    /// The exit status a command ends with (sysexits.h values, listed in latchkey(1)): the one
    /// map, for the full command, the launcher and an agent's refusals alike.
    public var exitStatus: Int32 {
        switch self {
        case .usage: return 64  // EX_USAGE
        case .configuration: return 65  // EX_DATAERR
        case .notFound: return 66  // EX_NOINPUT
        case .unavailable: return 69  // EX_UNAVAILABLE
        case .rejected: return 76  // EX_PROTOCOL
        case .keystore: return 77  // EX_NOPERM
        case .cannotCreate: return 73  // EX_CANTCREAT
        case .unexpected: return 1
        }
    }
}

/// Every error Latchkey shows a person: a message to act on and a category.
///
/// Messages name fields and files, never secret values.
public protocol LatchkeyError: Error, CustomStringConvertible, Sendable {
    var category: FailureCategory { get }
}
