import Foundation
public import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

/// A release waiting for approval, shown as a desktop notification with `notify-send` (libnotify)
/// when a desktop session is there to show it; nothing otherwise. The notification only tells:
/// `latchkey approve N` answers, so a click on a spoofed notification approves nothing.
public enum DesktopNotification {
    /// Shows `request`; `false` when there is no desktop or no `notify-send`.
    @discardableResult
    public static func show(_ request: WaitingRelease, environment: [String: String]) -> Bool {
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil,
            let program = ExecutableSearch.find("notify-send", environment: environment)
        else { return false }
        let body = "\(request.account) for \(request.requester)\nRun: latchkey approve \(request.id)   (or latchkey deny \(request.id))"
        let arguments = [
            "--app-name=Latchkey", "--urgency=critical",
            "--expire-time=\(max(1, request.expiresAt - Int(Date().timeIntervalSince1970)) * 1000)",
            "Latchkey: approve a token release?", markupEscaped(TerminalText.sanitized(body, maxLength: 800)),
        ]
        return (try? ChildProcess.launch(path: program, arguments: arguments, environment: environment)) != nil
    }

    /// Notification servers read the body as simple markup: `<`, `>` and `&` are shown, not obeyed.
    static func markupEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }
}
