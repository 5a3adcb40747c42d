import Foundation
import LatchkeyBroker
import LatchkeyBrokerWire
import LatchkeyVault

/// `latchkey agent`'s own terminal: what it says, and, when it runs in one, releases waiting for
/// approval asked there (`y 3` or `n 3`; `y` or `n` alone only while one waits: `TypedAnswer`).
/// A desktop notification says the same where there is a desktop.
struct AgentTerminalPrompt: Sendable {
    let environment: [String: String]

    /// A line on stderr, stamped with the time.
    static let say: @Sendable (String) -> Void = { text in
        let time = Date().formatted(.iso8601.time(includingFractionalSeconds: false).timeSeparator(.colon))
        Output.info("latchkey agent \(time): \(text)")
    }

    var asksHere: Bool { isatty(STDIN_FILENO) == 1 }

    /// Says a new waiting release, with how to answer it.
    var announce: @Sendable (WaitingRelease) -> Void {
        let asksHere = asksHere
        let environment = environment
        return { request in
            let seconds = max(0, request.expiresAt - Int(Date().timeIntervalSince1970))
            let how = asksHere ? "type y \(request.id) or n \(request.id) here, or run" : "run"
            Self.say(
                "request \(request.id): release a token of \(request.account) to \(request.requester)? "
                    + "\(how) `latchkey approve \(request.id)` or `latchkey deny \(request.id)` (refused in \(seconds) s)")
            DesktopNotification.show(request, environment: environment)
        }
    }

    /// Reads answers from the terminal the agent runs in, in the background, for as long as it runs.
    func answerFromTerminal(_ agent: Agent) {
        guard asksHere else { return }
        Thread.detachNewThread {
            while let line = readLine() {
                switch TypedAnswer(line, waiting: agent.waiting.map(\.id)) {
                case .answer(let id, let approve):
                    Self.say(
                        agent.answer(id, approve: approve) ? "\(approve ? "approved" : "denied") request \(id)" : "no request \(id) waits")
                case .notAnAnswer:
                    if !line.isEmpty { Self.say("answer a request with y N or n N") }
                case .nothingWaits:
                    Self.say("no request waits for approval")
                case .whichOne(let ids):
                    Self.say(
                        "requests \(ids.map(String.init).joined(separator: ", ")) wait: answer one with y N or n N")
                }
            }
        }
    }
}
