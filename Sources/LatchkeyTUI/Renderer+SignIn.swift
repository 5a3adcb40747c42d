import Foundation
import LatchkeySecondFactor
import LatchkeyVault

/// The sign-in screens: browser, paste, device code, and the firebase forms.
/// The sign-in screen, one drawing per step: browser, paste, device code, the SSH chooser and
/// the firebase forms.
extension Renderer {
    static func signIn(_ screen: SignInScreen, state: AppState, width: Int, height: Int, firstRow: Int)
        -> ([[Frame.Span]], [Frame.Hyperlink])
    {
        let name = safe(state.provider(named: screen.purpose.provider)?.displayName ?? screen.purpose.provider)
        let spin = String(spinner[state.spinnerStep % spinner.count])
        // The first factor of a firebase provider says whose: its second factor follows.
        var title = screen.firstFactor.map { "Sign in to \(safe($0)) (first factor of \(name))" } ?? "Sign in to \(name)"
        switch screen.purpose {
        case .signIn: break
        case .signInAgain(let id):
            if screen.firstFactor == nil { title = "Sign in to \(name) again as \(safe(state.account(id)?.label ?? id.subject))" }
        case .enroll(let id):
            title = "Enroll a phone as second factor for \(safe(state.account(id)?.label ?? id.subject)) at \(name)"
        }
        if case .device(let device, let expiresAt) = screen.step {
            return deviceCode(
                device, expiresAt: expiresAt, title: title, state: state, width: width, height: height, firstRow: firstRow)
        }
        var lines: [[Frame.Span]] = [blank(width), line(width) { $0.append(" " + title, .accent) }, blank(width)]
        func add(_ text: String, _ style: TextStyle = .normal) { lines += paragraph(text, width: width, style) }
        func field(_ label: String, _ shown: String, focused: Bool) {
            lines.append(
                line(width) { builder in
                    builder.append(" " + DisplayWidth.fitted(label, to: 12), focused ? .accent : .dim)
                    builder.append(TextEntry.visibleTail(shown, width: width - 14, cursor: focused))
                })
        }
        var links: [Frame.Hyperlink] = []
        switch screen.step {
        case .working(let text):
            add("\(spin) \(safe(text))")
        case .choosingMode:
            let why = "This is an SSH session ($SSH_CONNECTION is set): a browser started here would open on this machine, not on yours."
            add(why, .warning)
            lines.append(blank(width))
            let choices = [
                ("p", "paste the redirect URL from a browser on your own machine"),
                ("d", "show a device code to enter on any device (if the provider allows it)"),
                ("b", "open a browser here anyway"),
            ]
            for (key, meaning) in choices { lines += paragraph(meaning, width: width, lead: "   " + key + "  ", leadStyle: .accent) }
        case .browser(let url, let redirectURI, let listeningOn, let browserProblem):
            if let browserProblem {
                add("No browser could be opened: \(safe(browserProblem))", .warning)
                add("\(spin) Open this address in a browser on this machine,")
                add("or press p to paste the redirect URL from elsewhere, d for a device code.")
                if state.demo != nil { add("Demo: press a and the demo browser signs in as the demo user for you.", .accent) }
            } else {
                add("\(spin) Opening your browser… waiting for it to come back.")
                add("If no browser opened, open this address:")
            }
            lines.append(blank(width))
            var after = [blank(width)]
            if !listeningOn.isEmpty {
                after += paragraph("Listening on \(listeningOn.map(safe).joined(separator: " and "))", width: width)
                after += paragraph("for \(safe(redirectURI))", width: width, .dim)
            }
            // Below the address: its "continues" line and what listens.
            links += address(url, into: &lines, width: width, height: height, reserved: after.count + 2, firstRow: firstRow)
            lines += after
        case .paste(let url, let redirectURI, let submitted):
            lines += paragraph("Open this address in a browser on any machine:", width: width, lead: " 1. ")
            lines.append(blank(width))
            var after = [blank(width)]
            after += paragraph(
                "After you sign in, the browser fails to load \(safe(redirectURI))… (nothing listens there). "
                    + "Copy the whole address from its address bar.", width: width, lead: " 2. ")
            after += paragraph("Paste it here and press Enter:", width: width, lead: " 3. ")
            // Below the address: its "continues" line, the steps, the entry and the count under it.
            links += address(url, into: &lines, width: width, height: height, reserved: after.count + 4, firstRow: firstRow)
            lines += after
            let entry = screen.fields.first ?? TextEntry()
            lines.append(
                line(width) { builder in
                    builder.append(" > ", .accent)
                    builder.append(submitted ? "" : TextEntry.visibleTail(entry.text, width: width - 4))
                })
            let count = entry.count
            lines.append(
                line(width) {
                    $0.append(
                        submitted
                            ? " \(spin) Checking the redirect URL…"
                            : "   \(count) character\(count == 1 ? "" : "s")\(count > 0 ? "; only the end is shown" : "")", .dim)
                })
        case .device:
            break
        case .credentials:
            add("Email and password of the account:")
            lines.append(blank(width))
            field("Email", safe(screen.fields[0].text), focused: screen.focus == 0)
            field("Password", String(repeating: "•", count: min(screen.fields[1].count, 64)), focused: screen.focus == 1)
        case .choosingHint(let hints):
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
            let boxes = (0..<SignInScreen.codeLength).map { $0 < typed.count ? String(typed[$0]) : "·" }.joined(separator: " ")
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
        if let problem = screen.problem, screen.showsProblem {
            lines.append(blank(width))
            add(safe(problem.message) + (problem.recovery == .resendCode ? " Press r for a new code." : ""), .error)
        }
        return (lines, links)
    }

    /// The address drawn whole, wrapped at the window's edge with nothing beside it; each piece
    /// carries the same OSC 8 link, so clicking or copying any piece yields the full URL.
    private static func address(
        _ url: URL, into lines: inout [[Frame.Span]], width: Int, height: Int, reserved: Int, firstRow: Int
    ) -> [Frame.Hyperlink] {
        let address = safe(url.absoluteString)
        let pieces = DisplayWidth.wrapped(address, to: width)
        let shown = max(1, height - lines.count - reserved)
        var links: [Frame.Hyperlink] = []
        for piece in pieces.prefix(shown) {
            links.append(Frame.Hyperlink(row: firstRow + lines.count, column: 0, text: piece, url: address))
            lines.append(line(width) { $0.append(piece, .link) })
        }
        if pieces.count > shown {
            lines.append(line(width) { $0.append(" … the address continues: make the window larger to see it whole", .dim) })
        }
        return links
    }

    // MARK: - Device code

    /// The user code in large type and plain, the verification address as a link, and a QR code
    /// of the complete address beside them when the window has room.
    static func deviceCode(
        _ device: DeviceCode, expiresAt: Date, title: String, state: AppState, width: Int, height: Int, firstRow: Int
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
        func wrap(_ text: String, _ style: TextStyle = .normal) -> [[Frame.Span]] { paragraph(text, width: textWidth, style) }
        func add(_ text: String, _ style: TextStyle = .normal) { left += wrap(text, style) }
        add("\(title) with a device code", .accent)
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
        let remaining = expiresAt.timeIntervalSince(state.now)
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

    // MARK: - Adding a provider

    static func addProvider(_ screen: AddProviderScreen, state: AppState, width: Int) -> [[Frame.Span]] {
        let spin = String(spinner[state.spinnerStep % spinner.count])
        var lines: [[Frame.Span]] = [blank(width), line(width) { $0.append(" Add a provider", .accent) }, blank(width)]
        func add(_ text: String, _ style: TextStyle = .normal) { lines += paragraph(text, width: width, style) }
        switch screen.step {
        case .loading:
            add("\(spin) Looking for the installed presets…")
        case .choosing(let choices):
            add("Start from which preset? Each file's comments say how to register a client there.")
            lines.append(blank(width))
            for (index, choice) in choices.enumerated() {
                let selected = index == screen.choice
                lines.append(
                    line(width) { builder in
                        builder.append(selected ? " ▸ " : "   ", selected ? .selected : .normal)
                        builder.append(safe(choice.label), selected ? .selected : .normal)
                        builder.fill(selected ? .selected : .normal)
                    })
            }
        case .form(let choice), .writing(let choice):
            add("From \(safe(choice.label)):")
            lines.append(blank(width))
            var labels = ["Name"]
            if choice.takesIssuer { labels.append("Issuer") }
            labels.append("Client ID")
            for (index, label) in labels.enumerated() {
                let focused = index == screen.focus
                lines.append(
                    line(width) { builder in
                        builder.append(" " + DisplayWidth.fitted(label, to: 12), focused ? .accent : .dim)
                        builder.append(TextEntry.visibleTail(safe(screen.fields[index].text), width: width - 14, cursor: focused))
                    })
            }
            lines.append(blank(width))
            if case .writing = screen.step {
                add("\(spin) Checking the file as `latchkey providers check` would…")
            } else {
                add("The name is the file name in providers.d. The client ID may stay empty and be set in the file later.", .dim)
            }
        }
        if let problem = screen.problem {
            lines.append(blank(width))
            for piece in problem.split(separator: "\n") { add(safe(String(piece)), .error) }
        }
        return lines
    }

    /// A factor as the server described it: its name, then the masked number or the app.
    static func hintLabel(_ hint: SecondFactorHint) -> String {
        let what = hint.kind == .phone ? (hint.phoneNumber ?? "phone") : "Authenticator app"
        guard let name = hint.displayName, !name.isEmpty else { return safe(what) }
        return safe(name) + "  " + safe(what)
    }

    /// What to do after a failure, by `FirebaseAuthError.recovery`.
    static func advice(_ recovery: FirebaseAuthError.Recovery, purpose: SignInScreen.Purpose) -> String {
        var again = "Press Enter to sign in again from the start, any other key to go back."
        if case .enroll = purpose { again = "Press any key to go back." }
        switch recovery {
        case .wait: return "Wait a few minutes before trying again. Press any key to go back."
        case .restart, .resendCode: return again
        case .verifyEmail: return "Verify the account's email address first, then enroll again. Press any key to go back."
        case .retryCode, .none: return "Press any key to go back."
        }
    }

    /// The footer's keys for each step.
    static func signInKeys(_ screen: SignInScreen, state: AppState) -> [String] {
        var keys: [String]
        switch screen.step {
        case .working: keys = ["Esc cancel"]
        case .choosingMode: keys = ["b browser here", "p paste URL", "d device code", "Esc back"]
        case .browser: keys = ["p paste URL instead", "d device code instead", "Esc cancel"]
        case .paste(_, _, let submitted): keys = submitted ? ["Esc cancel"] : ["⏎ submit", "Esc cancel"]
        case .device: keys = ["Esc cancel"]
        case .credentials, .enrollForm: keys = ["Tab next field", "⏎ continue", "Esc cancel"]
        case .choosingHint: keys = ["↑↓ choose", "⏎ use it", "Esc cancel"]
        case .code:
            keys =
                screen.canResend && screen.resendWait(now: state.now) == 0
                ? ["⏎ verify", "r new code", "Esc cancel"] : ["⏎ verify", "Esc cancel"]
        case .failed: keys = ["any key: back"]
        }
        if state.demo != nil && screen.demoVisit != nil { keys.insert("a demo browser", at: 0) }
        return keys
    }
}
