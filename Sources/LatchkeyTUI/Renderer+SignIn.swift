import Foundation
import LatchkeyCore

/// The sign-in screens: browser, paste, device code, and the firebase forms.
extension Renderer {
    static func signIn(_ screen: SignInScreen, state: AppState, width: Int, height: Int, firstRow: Int)
        -> ([[Frame.Span]], [Frame.Hyperlink])
    {
        let name = safe(state.provider(named: screen.provider)?.displayName ?? screen.provider)
        let spin = String(spinner[state.spinnerStep % spinner.count])
        if let device = screen.device {
            return deviceCode(device, screen: screen, state: state, name: name, width: width, height: height, firstRow: firstRow)
        }
        // The first factor of a firebase provider says whose: its second factor follows.
        let purpose = screen.firstFactorOf.map { " (first factor of \(safe(state.provider(named: $0)?.displayName ?? $0)))" } ?? ""
        var lines: [[Frame.Span]] = [blank(width), line(width) { $0.append(" Sign in to \(name)\(purpose)", .accent) }, blank(width)]
        var links: [Frame.Hyperlink] = []
        if screen.choosingMode {
            let why = "This is an SSH session ($SSH_CONNECTION is set): a browser started here would open on this machine, not on yours."
            for piece in wordWrapped(why, to: width - 2) { lines.append(line(width) { $0.append(" " + piece, .warning) }) }
            lines.append(blank(width))
            let choices = [
                ("p", "paste the redirect URL from a browser on your own machine"),
                ("d", "show a device code to enter on any device (if the provider allows it)"),
                ("b", "open a browser here anyway"),
            ]
            for (key, meaning) in choices {
                lines.append(
                    line(width) { builder in
                        builder.append("   " + key + "  ", .accent)
                        builder.append(meaning)
                    })
            }
            return (lines, links)
        }
        guard let url = screen.authorizationURL else {
            let what = screen.mode == .device ? "Asking the provider for a device code…" : "Contacting the provider…"
            lines.append(line(width) { $0.append(" \(spin) \(what)") })
            return (lines, links)
        }
        if screen.paste != nil {
            lines.append(line(width) { $0.append(" 1. Open this address in a browser on any machine:") })
        } else if let problem = screen.browserProblem {
            for piece in wordWrapped("No browser could be opened: \(safe(problem))", to: width - 2) {
                lines.append(line(width) { $0.append(" " + piece, .warning) })
            }
            lines.append(line(width) { $0.append(" \(spin) Open this address in a browser on this machine,") })
            lines.append(line(width) { $0.append(" or press p to paste the redirect URL from elsewhere, d for a device code.") })
            if state.demo != nil {
                lines.append(line(width) { $0.append(" Demo: press a and the demo browser signs in as the demo user for you.", .accent) })
            }
        } else {
            lines.append(line(width) { $0.append(" \(spin) Opening your browser… waiting for it to come back.") })
            lines.append(line(width) { $0.append(" If no browser opened, open this address:") })
        }
        lines.append(blank(width))
        // The address is drawn whole, wrapped at the window's edge with nothing beside it, and each
        // piece carries the same OSC 8 link, so clicking or copying any piece yields the full URL.
        let address = safe(url.absoluteString)
        let reserved = screen.paste == nil ? 5 : 8
        let pieces = DisplayWidth.wrapped(address, to: width)
        let shown = max(1, height - lines.count - reserved)
        for piece in pieces.prefix(shown) {
            links.append(Frame.Hyperlink(row: firstRow + lines.count, column: 0, text: piece, url: address))
            lines.append(line(width) { $0.append(piece, .link) })
        }
        if pieces.count > shown {
            lines.append(line(width) { $0.append(" … the address continues: make the window larger to see it whole", .dim) })
        }
        lines.append(blank(width))
        if let paste = screen.paste {
            lines.append(
                line(width) {
                    $0.append(" 2. After you sign in, the browser fails to load \(safe(paste.redirectURI))… (nothing listens there).")
                })
            lines.append(line(width) { $0.append("    Copy the whole address from its address bar.") })
            lines.append(line(width) { $0.append(" 3. Paste it here and press Enter:") })
            lines.append(
                line(width) { builder in
                    builder.append(" > ", .accent)
                    builder.append(paste.submitted ? "" : TextEntry.visibleTail(paste.entry.text, width: width - 4))
                })
            let count = paste.entry.count
            lines.append(
                line(width) {
                    $0.append(
                        paste.submitted
                            ? " \(spin) Checking the redirect URL…"
                            : "   \(count) character\(count == 1 ? "" : "s")\(count > 0 ? "; only the end is shown" : "")", .dim)
                })
        } else if let redirectURI = screen.redirectURI, !screen.listeningOn.isEmpty {
            lines.append(line(width) { $0.append(" Listening on \(screen.listeningOn.map(safe).joined(separator: " and "))") })
            lines.append(line(width) { $0.append(" for \(safe(redirectURI))", .dim) })
        }
        return (lines, links)
    }

    // MARK: - Device code

    /// The user code in large type and plain, the verification address as a link, and a QR code
    /// of the complete address beside them when the window has room.
    static func deviceCode(
        _ device: DeviceCode, screen: SignInScreen, state: AppState, name: String, width: Int, height: Int, firstRow: Int
    ) -> ([[Frame.Span]], [Frame.Hyperlink]) {
        let spin = String(spinner[state.spinnerStep % spinner.count])
        let qrLines = QRCode(text: device.verificationURIComplete ?? device.verificationURI)?.halfBlockLines(quietZone: 2) ?? []
        let qrWidth = qrLines.first.map { DisplayWidth.of($0) } ?? 0
        let besideText = !qrLines.isEmpty && width - qrWidth - 2 >= 38 && qrLines.count <= height
        let textWidth = besideText ? width - qrWidth - 2 : width
        // Under 20 rows the blank lines and the second warning line go, so the code and the status fit.
        let roomy = height >= 20
        var left: [[Frame.Span]] = roomy ? [blank(textWidth)] : []
        var links: [Frame.Hyperlink] = []
        func wrap(_ text: String, _ style: TextStyle = .normal) -> [[Frame.Span]] {
            wordWrapped(text, to: textWidth - 1).map { piece in line(textWidth) { $0.append(" " + piece, style) } }
        }
        func add(_ text: String, _ style: TextStyle = .normal) { left += wrap(text, style) }
        add("Sign in to \(name) with a device code", .accent)
        add("Client \(safe(device.clientID)) asks to sign in.", .warning)
        add("Only continue if you started this yourself;", .warning)
        if roomy {
            add("never enter a code that someone sent you or read out to you.", .warning)
            left.append(blank(textWidth))
        }
        add("On any device, open")
        let address = safe(device.verificationURI)
        for piece in DisplayWidth.wrapped(address, to: textWidth - 1) {
            links.append(Frame.Hyperlink(row: firstRow + left.count, column: 1, text: piece, url: address))
            left.append(line(textWidth) { $0.append(" " + piece, .link) })
        }
        add("and enter the code")
        if roomy { left.append(blank(textWidth)) }
        let code = safe(device.userCode)
        let remaining = screen.deviceExpiresAt.map { $0.timeIntervalSince(state.now) } ?? 0
        var status: [[Frame.Span]] = roomy ? [blank(textWidth)] : []
        if remaining > 0 {
            status += wrap("\(spin) Waiting for approval (polled every \(device.interval) s).")
            status += wrap("The code expires in \(TimeText.short(remaining)).")
        } else {
            status += wrap("The code has expired; press Esc and sign in again.", .error)
        }
        if state.demo != nil && remaining > 0 {
            status += wrap("Demo: press a and the demo browser approves the code as the demo user.", .accent)
        }
        // The large type goes only where the plain code and the status still fit below it.
        let large = BlockFont.lines(code)
        if large.allSatisfy({ DisplayWidth.of($0) + 3 <= textWidth })
            && left.count + large.count + 2 + status.count + (besideText ? 0 : 1) <= height
        {
            for row in large { left.append(line(textWidth) { $0.append("   " + row, .accent) }) }
            left.append(blank(textWidth))
        }
        left.append(
            line(textWidth) { builder in
                builder.append("   " + code, .accent)
                builder.append("   (to copy)", .dim)
            })
        left += status
        guard !qrLines.isEmpty else { return (left, links) }
        if besideText {
            let rows = max(left.count, qrLines.count + 1)
            var lines: [[Frame.Span]] = []
            for row in 0..<rows {
                lines.append(
                    line(width) { builder in
                        for span in row < left.count ? left[row] : blank(textWidth) { builder.append(span.text, span.style) }
                        builder.append("  ")
                        if row >= 1, row - 1 < qrLines.count { builder.append(qrLines[row - 1], .qrCode) }
                    })
            }
            return (lines, links)
        }
        if left.count + 1 + qrLines.count <= height && qrWidth + 3 <= width {
            left.append(blank(width))
            for row in qrLines {
                left.append(
                    line(width) {
                        $0.append("   "); $0.append(row, .qrCode)
                    })
            }
        } else {
            left.insert(
                line(width) { $0.append(" Make the window larger to see a QR code of the address.", .dim) }, at: min(left.count, height - 1)
            )
        }
        return (left, links)
    }

    // MARK: - Second factor

    static func secondFactor(_ screen: SecondFactorScreen, state: AppState, width: Int) -> [[Frame.Span]] {
        let name = safe(state.provider(named: screen.provider)?.displayName ?? screen.provider)
        let spin = String(spinner[state.spinnerStep % spinner.count])
        var title = "Sign in to \(name)"
        if case .enroll(let id) = screen.purpose {
            title = "Enroll a phone as second factor for \(safe(state.account(id)?.label ?? id.subject)) at \(name)"
        }
        var lines: [[Frame.Span]] = [blank(width), line(width) { $0.append(" " + title, .accent) }, blank(width)]
        func add(_ text: String, _ style: TextStyle = .normal) {
            for piece in wordWrapped(text, to: width - 1) { lines.append(line(width) { $0.append(" " + piece, style) }) }
        }
        func field(_ label: String, _ shown: String, focused: Bool) {
            lines.append(
                line(width) { builder in
                    builder.append(" " + DisplayWidth.fitted(label, to: 12), focused ? .accent : .dim)
                    builder.append(TextEntry.visibleTail(shown, width: width - 14, cursor: focused))
                })
        }
        switch screen.step {
        case .working(let text):
            add("\(spin) \(safe(text))")
        case .credentials:
            add("Email and password of the account:")
            lines.append(blank(width))
            field("Email", safe(screen.fields[0].text), focused: screen.focus == 0)
            field("Password", String(repeating: "•", count: min(screen.fields[1].count, 64)), focused: screen.focus == 1)
        case .choosing(let hints):
            add("This account has a second factor. Use which one?")
            lines.append(blank(width))
            for (index, hint) in hints.enumerated() {
                let selected = index == screen.choice
                lines.append(
                    line(width) { builder in
                        builder.append(selected ? " ▸ " : "   ", selected ? .selected : .normal)
                        builder.append("\(index + 1)  \(hintLabel(hint))", selected ? .selected : .normal)
                        builder.fill(selected ? .selected : .normal)
                    })
            }
        case .code(let hint):
            if hint.kind == .phone {
                add("Code sent to \(safe(hint.phoneNumber ?? "the phone")) by SMS.")
            } else {
                add("Enter the code your authenticator app shows for \(hintLabel(hint)).")
            }
            if let notice = screen.notice { add(safe(notice), .warning) }
            lines.append(blank(width))
            let typed = Array(screen.fields[0].text)
            let boxes = (0..<SecondFactorScreen.codeLength).map { $0 < typed.count ? String(typed[$0]) : "·" }.joined(separator: " ")
            lines.append(
                line(width) { builder in
                    builder.append(" Code  ", .accent)
                    builder.append(boxes, .accent)
                })
            lines.append(blank(width))
            if screen.canResend {
                let wait = screen.resendWait(now: state.now)
                add(wait > 0 ? "r sends a new code in \(TimeText.countdown(TimeInterval(wait)))" : "r sends a new code", .dim)
            }
        case .enrollForm:
            add("A code is sent by SMS to the number to prove it is yours.")
            lines.append(blank(width))
            field("Phone", safe(screen.fields[0].text), focused: screen.focus == 0)
            field("Name", safe(screen.fields[1].text), focused: screen.focus == 1)
            add("The number in E.164 form: + country code and number, e.g. +15555550100. The name is yours to choose.", .dim)
        case .failed(let problem):
            add(safe(problem.message), .error)
            lines.append(blank(width))
            add(advice(problem.recovery, purpose: screen.purpose))
        }
        if let problem = screen.problem, !screen.hasStopped {
            lines.append(blank(width))
            add(safe(problem.message) + (problem.recovery == .resendCode ? " Press r for a new code." : ""), .error)
        }
        return lines
    }

    /// A factor as the server described it: its name, then the masked number or the app.
    static func hintLabel(_ hint: SecondFactorHint) -> String {
        let what = hint.kind == .phone ? (hint.phoneNumber ?? "phone") : "Authenticator app"
        guard let name = hint.displayName, !name.isEmpty else { return safe(what) }
        return safe(name) + "  " + safe(what)
    }

    /// What to do after a failure, by `SecondFactorError.recovery`.
    static func advice(_ recovery: SecondFactorError.Recovery, purpose: SecondFactorScreen.Purpose) -> String {
        let again =
            purpose == .signIn ? "Press Enter to sign in again from the start, any other key to go back." : "Press any key to go back."
        switch recovery {
        case .wait: return "Wait a few minutes before trying again. Press any key to go back."
        case .restart, .resendCode: return again
        case .verifyEmail: return "Verify the account's email address first, then enroll again. Press any key to go back."
        case .retryCode, .none: return "Press any key to go back."
        }
    }

    static func secondFactorKeys(_ screen: SecondFactorScreen, now: Date) -> [String] {
        switch screen.step {
        case .working: return ["Esc cancel"]
        case .credentials, .enrollForm: return ["Tab next field", "⏎ continue", "Esc cancel"]
        case .choosing: return ["↑↓ choose", "⏎ use it", "Esc cancel"]
        case .code:
            return screen.canResend && screen.resendWait(now: now) == 0
                ? ["⏎ verify", "r new code", "Esc cancel"] : ["⏎ verify", "Esc cancel"]
        case .failed: return ["any key: back"]
        }
    }

    /// `text` in lines of at most `width` cells, broken at spaces where it can be.
    static func wordWrapped(_ text: String, to width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if DisplayWidth.of(candidate) <= width {
                current = candidate
                continue
            }
            if !current.isEmpty { lines.append(current) }
            let pieces = DisplayWidth.wrapped(String(word), to: width)
            lines += pieces.dropLast()
            current = pieces.last ?? ""
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }
}
