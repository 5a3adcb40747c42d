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

/// What `latchkey demo` lends the screen: its panel, and the demo browser.
public struct DemoHooks: Sendable {
    /// The panel as it is now; the screen's first frame shows it, so the demo credentials are
    /// there from the start rather than after the first change.
    public var panel: @Sendable () -> DemoPanel
    /// Called once with a function that puts a new panel on the screen (an SMS arrived, the
    /// phone app's code changed).
    public var watch: @Sendable (_ show: @escaping @Sendable (DemoPanel) -> Void) -> Void
    /// Plays the person in a browser (the `a` key on a sign-in screen).
    public var browse: @Sendable (DemoVisit) async throws -> Void

    public init(
        panel: @escaping @Sendable () -> DemoPanel,
        watch: @escaping @Sendable (_ show: @escaping @Sendable (DemoPanel) -> Void) -> Void,
        browse: @escaping @Sendable (DemoVisit) async throws -> Void
    ) {
        self.panel = panel
        self.watch = watch
        self.browse = browse
    }
}

/// Where the demo browser goes for the person: the authorization URL of a browser sign-in, or the
/// verification page of a device-code sign-in, where it types the code shown on the screen.
public enum DemoVisit: Sendable, Equatable {
    case authorization(URL)
    case device(verificationURI: URL, userCode: String)
}
