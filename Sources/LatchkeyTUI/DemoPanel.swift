public import Foundation

/// The demo screen's panel (`latchkey demo` only): who to sign in as, and the SMS inbox, so the
/// whole product can be tried with no account anywhere.
public struct DemoPanel: Sendable, Equatable {
    public var notes: [String]
    /// The SMS messages received so far, oldest first.
    public var inbox: [String]

    public init(notes: [String], inbox: [String] = []) {
        self.notes = notes
        self.inbox = inbox
    }
}

/// What `latchkey demo` lends the screen: the panel's notes, its SMS inbox, and the demo browser.
public struct DemoHooks: Sendable {
    public var notes: [String]
    /// Called once with a function that puts the inbox (oldest first) on the screen.
    public var watchInbox: @Sendable (_ show: @escaping @Sendable ([String]) -> Void) -> Void
    /// Plays the person in a browser at an authorization URL (the `a` key on a sign-in screen).
    public var browse: @Sendable (URL) async throws -> Void

    public init(
        notes: [String], watchInbox: @escaping @Sendable (_ show: @escaping @Sendable ([String]) -> Void) -> Void,
        browse: @escaping @Sendable (URL) async throws -> Void
    ) {
        self.notes = notes
        self.watchInbox = watchInbox
        self.browse = browse
    }
}
