import Foundation
import LatchkeyEssentials

/// One line of `latchkey doctor`: what was checked, what was found, and what to do about it.
public struct Finding: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable, Equatable {
        /// Works.
        case ok
        /// Works, but something is missing or degraded (a fallback is used).
        case warning
        /// A sign-in or the keystore fails until this is fixed.
        case problem
    }

    public var severity: Severity
    /// What was checked: `providers`, `vault directory`, `IPv6 loopback`…
    public var subject: String
    public var found: String
    /// What to do; `nil` when there is nothing to do.
    public var fix: String?

    public init(_ severity: Severity, _ subject: String, _ found: String, fix: String? = nil) {
        self.severity = severity
        self.subject = subject
        self.found = found
        self.fix = fix
    }

    /// `problem  vault directory: … Fix: …`, the severity padded so the subjects line up.
    public var description: String {
        let label = severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        // Paths and TERM come from the environment: no control character reaches the terminal.
        return label + TerminalText.sanitized("\(subject): \(found)" + (fix.map { ". Fix: \($0)" } ?? ""))
    }
}
