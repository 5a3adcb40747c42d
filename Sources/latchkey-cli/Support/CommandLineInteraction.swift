import Foundation
import LatchkeyCore

/// The plain-terminal side of a sign-in: messages on stderr, the pasted URL from stdin.
struct CommandLineInteraction: SignInInteraction {
    func authorizationStarted(url: URL, provider: Provider, redirectURI: String, listeningOn: [String]) async {
        Output.info("Signing in to \(TerminalText.sanitized(provider.displayName)) (\(provider.issuer ?? url.host ?? "")).")
        if !listeningOn.isEmpty {
            Output.info("Waiting for the browser at \(redirectURI) (listening on \(listeningOn.joined(separator: " and "))).")
            Output.info("If no browser opens, visit:\n\n  \(url.absoluteString)\n")
        }
    }

    func browserUnavailable(url: URL, reason: String) async {
        Output.info("\(reason). Open this address in a browser on this machine:\n\n  \(url.absoluteString)\n")
    }

    func pasteRedirectURL(url: URL, provider: Provider, redirectURI: String) async throws -> String {
        Output.info(
            """
            Open this address in any browser:

              \(url.absoluteString)

            After you sign in, the browser is sent to \(redirectURI.replacingOccurrences(of: provider.redirectPath, with: ""))… and shows
            an error page (nothing listens there). Copy the whole address from its address bar and paste it here.
            """)
        FileHandle.standardError.write(Data("Redirect URL: ".utf8))
        guard let line = PastedLine.read(), !line.isEmpty else { throw SignInError.cancelled }
        return line
    }

    func deviceCodeIssued(_ authorization: DeviceAuthorization, provider: Provider) async {
        Output.info(
            """
            \(TerminalText.sanitized(provider.displayName)) (client \(TerminalText.sanitized(provider.clientID))) asks you to approve a sign-in.
            Only continue if you started it. On any device, open

              \(TerminalText.sanitized(authorization.verificationURIComplete ?? authorization.verificationURI))

            and enter the code  \(TerminalText.sanitized(authorization.userCode))
            (it expires in \(authorization.expiresIn / 60) min; waiting…)
            """)
    }
}

/// Reads the pasted redirect URL from stdin with no length limit.
///
/// A terminal in canonical mode cuts a line at 4096 bytes (the kernel's line buffer), and
/// redirect URLs with large `code`s exceed that; so canonical mode is switched off for the read.
enum PastedLine {
    static func read() -> String? {
        var original = termios()
        let isTerminal = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &original) == 0
        if isTerminal {
            var raw = original
            raw.c_lflag &= ~tcflag_t(ICANON)
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
        defer { if isTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &original) } }
        return LineReader(descriptor: STDIN_FILENO).readLine()?.trimmingCharacters(in: .whitespaces)
    }
}
