import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyVault

/// Turns the state into a frame for a size. Pure: the same state and size give the same frame.
///
/// Every string that came from a server or a provider file passes `TerminalText.sanitized` here,
/// so an escape sequence in an error description is drawn as inert `\x1B` text.
public enum Renderer {
    static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

    public static func render(_ state: AppState) -> Frame {
        let size = state.size
        guard size.isLargeEnough else { return tooSmall(size) }
        var lines: [[Frame.Span]] = [header(state, width: size.columns)]
        var links: [Frame.Hyperlink] = []
        let message = messageLines(state, width: size.columns)
        // The help takes the whole body: its keys say what the panel's notes say, and more.
        var panel: [[Frame.Span]] = []
        if let demo = state.demo, state.mode != .help {
            panel = demoPanel(demo, width: size.columns, height: size.rows - 2 - message.count)
        }
        let bodyHeight = size.rows - 2 - message.count - panel.count
        var body: [[Frame.Span]]
        switch state.mode {
        case .unlock(let prompt): body = unlock(prompt, width: size.columns)
        case .help: body = help(width: size.columns)
        case .signIn(let screen):
            (body, links) = signIn(screen, state: state, width: size.columns, height: bodyHeight, firstRow: 1)
        case .addProvider(let screen): body = addProvider(screen, state: state, width: size.columns)
        case .list, .confirmSignOut, .approveRelease: body = list(state, width: size.columns, height: bodyHeight)
        }
        body = Array(body.prefix(bodyHeight))
        while body.count < bodyHeight { body.append(blank(size.columns)) }
        lines += body
        lines += panel
        lines += message
        lines.append(footer(state, width: size.columns))
        return Frame(size: size, lines: lines, links: links)
    }

    static func safe(_ text: String) -> String { TerminalText.sanitized(text, maxLength: 500) }

    static func blank(_ width: Int) -> [Frame.Span] { [Frame.Span(String(repeating: " ", count: width))] }

    static func line(_ width: Int, _ build: (inout LineBuilder) -> Void) -> [Frame.Span] {
        var builder = LineBuilder(width: width)
        build(&builder)
        builder.fill()
        return builder.spans
    }

    /// `text` word-wrapped to the window after `lead` (drawn in `leadStyle`, else `style`), its
    /// further rows indented as far as `lead` reaches. What a person needs in order to act (a
    /// hint, a code, a key's meaning) goes through here, so it is wrapped whole, never cut.
    static func paragraph(
        _ text: String, width: Int, lead: String = " ", leadStyle: TextStyle? = nil, _ style: TextStyle = .normal
    ) -> [[Frame.Span]] {
        let indent = DisplayWidth.of(lead)
        return DisplayWidth.wordWrapped(text, to: width - indent).enumerated().map { index, piece in
            line(width) { builder in
                builder.append(index == 0 ? lead : String(repeating: " ", count: indent), leadStyle ?? style)
                builder.append(piece, style)
            }
        }
    }

    // MARK: - Too small

    static func tooSmall(_ size: TerminalSize) -> Frame {
        let width = max(size.columns, 0)
        let texts = ["Make the window larger", "(at least \(TerminalSize.minimum), now \(size))"]
        var lines = Array(repeating: blank(width), count: max(size.rows, 0))
        for (offset, text) in texts.enumerated() {
            let row = size.rows / 2 - 1 + offset
            guard row >= 0, row < lines.count, width > 0 else { continue }
            let cut = DisplayWidth.truncated(text, to: width)
            let pad = max(0, (width - DisplayWidth.of(cut)) / 2)
            lines[row] = line(width) { $0.append(String(repeating: " ", count: pad) + cut, offset == 0 ? .warning : .normal) }
        }
        return Frame(size: size, lines: lines)
    }

    // MARK: - Header, message, footer

    static func header(_ state: AppState, width: Int) -> [Frame.Span] {
        var vault: String
        if case .unlock = state.mode {
            vault = "vault locked"
        } else if let unlockedAt = state.unlockedAt {
            vault = "\(state.keystoreBackend) unlocked \(TimeText.short(state.now.timeIntervalSince(unlockedAt)))"
        } else {
            vault = "\(state.keystoreBackend): opening…"
        }
        let count = state.accounts.count
        let right = "\(count) account\(count == 1 ? "" : "s")  \(vault) "
        return line(width) { builder in
            let left = " Latchkey"
            builder.append(left, .header)
            let gap = max(1, width - DisplayWidth.of(left) - DisplayWidth.of(right))
            builder.append(String(repeating: " ", count: gap), .header)
            builder.append(right, .header)
            builder.fill(.header)
        }
    }

    /// The most rows a message takes above the footer; a longer one ends in "…".
    static let messageRows = 3

    /// The message above the footer: a question waiting for y/n, the filter, or the last
    /// outcome, wrapped to at most `messageRows` rows (always one, blank when there is none).
    static func messageLines(_ state: AppState, width: Int) -> [[Frame.Span]] {
        var text = ""
        var style = TextStyle.normal
        if case .confirmSignOut(let id) = state.mode {
            let label = safe(state.account(id)?.label ?? id.subject)
            let provider = safe(state.provider(named: id.provider)?.displayName ?? id.provider)
            (text, style) = ("Sign out \(label) at \(provider) and revoke its tokens? y/n", .warning)
        } else if case .approveRelease(let request) = state.mode {
            let seconds = max(0, request.expiresAt - Int(state.now.timeIntervalSince1970))
            text = "Release a token of \(safe(request.account)) to \(safe(request.requester))? y/n (refused in \(seconds) s)"
            style = .warning
        } else if state.isEditingFilter || !state.filter.isEmpty {
            return [
                line(width) { builder in
                    builder.append(" / ", .accent)
                    builder.append(safe(state.filter) + (state.isEditingFilter ? "▏" : ""))
                }
            ]
        } else if let message = state.message {
            (text, style) = (safe(message.text), message.isError ? .error : .good)
        }
        guard !text.isEmpty else { return [blank(width)] }
        var lines = paragraph(text, width: width, style)
        if lines.count > messageRows {
            lines = Array(lines.prefix(messageRows - 1))
            let rest = DisplayWidth.wordWrapped(text, to: width - 1).dropFirst(messageRows - 1).joined(separator: " ")
            lines.append(line(width) { $0.append(" " + rest, style) })
        }
        return lines
    }

    static func footer(_ state: AppState, width: Int) -> [Frame.Span] {
        var keys: [String]
        switch state.mode {
        case .unlock: keys = ["⏎ unlock", "Esc quit"]
        case .help: keys = ["any key: back"]
        case .confirmSignOut: keys = ["y sign out", "n keep"]
        case .approveRelease(let request): keys = ["y release", "n refuse", "any other key: later (request \(request.id))"]
        case .signIn(let screen):
            keys = signInKeys(screen, state: state)
        case .addProvider(let screen):
            switch screen.step {
            case .loading, .writing: keys = ["Esc back"]
            case .choosing: keys = ["↑↓ choose", "⏎ fill it in", "Esc back"]
            case .form: keys = ["Tab next field", "⏎ check and add", "Esc back"]
            }
        case .list:
            if state.isEditingFilter {
                keys = ["type to filter", "⏎ keep", "Esc clear"]
            } else {
                let enter = state.selectedAccount == nil ? "⏎ sign in" : "⏎ sign in again"
                keys = [
                    "↑↓ move", enter, "n add account", "+ add provider", "r refresh", "x sign out", "c copy token", "/ filter", "? help",
                    "q quit",
                ]
                if let account = state.selectedAccount {
                    keys.insert("m use here", at: 2)
                    if state.provider(named: account.id.provider)?.enrollsPhones == true {
                        keys.insert("e enroll phone", at: 2)
                    }
                }
            }
        }
        // Keys that do not fit are left out from the middle: how to quit and get help always show.
        let separator = "  "
        while keys.count > 2 && DisplayWidth.of(" " + keys.joined(separator: separator)) > width {
            keys.remove(at: keys.count - 3)
        }
        return line(width) { $0.append(" " + keys.joined(separator: separator), .dim) }
    }

    // MARK: - Demo panel

    /// `latchkey demo`'s panel under the body: the notes, then the newest SMS messages, each
    /// wrapped whole (a code read off the panel is typed into the sign-in). The oldest messages
    /// go first when the window is short; the panel is left out when even the notes and the
    /// newest message would leave the body fewer than six rows.
    static func demoPanel(_ panel: DemoPanel, width: Int, height: Int) -> [[Frame.Span]] {
        var lines: [[Frame.Span]] = [
            line(width) { $0.append("── Demo " + String(repeating: "─", count: max(0, width - 8)), .accent) }
        ]
        lines += panel.notes.flatMap { paragraph(safe($0), width: width) }
        lines.append(line(width) { $0.append(" SMS inbox (the demo's phone):", .accent) })
        guard !panel.inbox.isEmpty else {
            lines += paragraph("nothing yet: codes sent to the demo phones arrive here", width: width, lead: "   ", .dim)
            return height - lines.count >= 6 ? lines : []
        }
        var messages: [[Frame.Span]] = []
        for text in panel.inbox.suffix(3).reversed() {
            let rows = paragraph(safe(text), width: width, lead: "   ", .good)
            guard messages.isEmpty || height - lines.count - messages.count - rows.count >= 6 else { break }
            messages.insert(contentsOf: rows, at: 0)
        }
        return height - lines.count - messages.count >= 6 ? lines + messages : []
    }

    // MARK: - List and detail

    /// Column widths for the list; the backend column goes first when the window is narrow.
    struct Columns {
        var name, status, expires, backend: Int

        init(width: Int) {
            status = 13
            expires = 10
            backend = width >= 64 ? 8 : 0
            name = width - 1 - status - expires - backend
        }
    }

    static func list(_ state: AppState, width: Int, height: Int) -> [[Frame.Span]] {
        let details = detail(state, width: width)
        // Nine rows hold an account's fields; its AWS roles may take up to half the screen.
        let detailHeight = min(max(9, details.count), max(3, height / 2))
        let listHeight = height - detailHeight - 1
        let columns = Columns(width: width)
        var lines: [[Frame.Span]] = []
        lines.append(
            line(width) { builder in
                builder.append(" " + DisplayWidth.fitted("PROVIDER / ACCOUNT", to: columns.name), .dim)
                builder.append(DisplayWidth.fitted("STATUS", to: columns.status), .dim)
                builder.append(DisplayWidth.fitted("EXPIRES", to: columns.expires), .dim)
                if columns.backend > 0 { builder.append("STORE", .dim) }
            })
        let rows = state.rows
        if rows.isEmpty {
            lines += paragraph(
                state.providers.isEmpty
                    ? "No providers configured: `latchkey providers add PRESET` adds one; `latchkey demo` shows two."
                    : "Nothing matches the filter.", width: width, .dim)
        }
        let selectedIndex = state.selectedIndex ?? 0
        let visible = max(listHeight - 1, 1)
        let first = max(0, min(selectedIndex - visible + 1, rows.count - visible))
        for index in rows.indices.dropFirst(first).prefix(visible) {
            lines.append(row(rows[index], state: state, columns: columns, width: width, selected: index == selectedIndex))
        }
        while lines.count < listHeight { lines.append(blank(width)) }
        lines.append(line(width) { $0.append(String(repeating: "─", count: width), .dim) })
        lines += details.prefix(detailHeight)
        return lines
    }

    static func row(_ row: AppState.Row, state: AppState, columns: Columns, width: Int, selected: Bool) -> [Frame.Span] {
        line(width) { builder in
            var name: String
            var status = ""
            var statusStyle = TextStyle.normal
            var expires = ""
            var backend = ""
            switch row {
            case .provider(let providerName):
                let provider = state.provider(named: providerName)
                name = " \(safe(provider?.displayName ?? providerName)) (\(safe(providerName)))"
                let count = state.accounts.filter { $0.id.provider == providerName }.count
                if state.providerErrors[providerName] != nil {
                    status = "error"
                    statusStyle = .error
                } else {
                    status = count == 0 ? "signed out" : "\(count) account\(count == 1 ? "" : "s")"
                    statusStyle = count == 0 ? .dim : .normal
                }
            case .account(let id):
                let account = state.account(id)
                name =
                    "   " + safe(account?.label ?? id.subject) + (account?.isDefault == true ? " (default)" : "")
                    + (account?.appliesHere == true ? " (here)" : "")
                if let account {
                    let accountStatus = state.status(of: account)
                    status = accountStatus.label
                    switch accountStatus {
                    case .signedIn: statusStyle = .good
                    case .expired, .refreshing, .signingOut: statusStyle = .warning
                    case .error: statusStyle = .error
                    }
                    expires = account.expiresAt.map { TimeText.countdown($0.timeIntervalSince(state.now)) } ?? "no expiry"
                    backend = state.keystoreBackend
                }
            }
            let base: TextStyle = selected ? .selected : .normal
            builder.append(DisplayWidth.fitted(name, to: columns.name + 1), selected ? .selected : .accentIfProvider(row))
            builder.append(DisplayWidth.fitted(status, to: columns.status), selected ? .selected : statusStyle)
            builder.append(DisplayWidth.fitted(expires, to: columns.expires), base)
            if columns.backend > 0 { builder.append(DisplayWidth.fitted(safe(backend), to: columns.backend), base) }
            builder.fill(base)
        }
    }

    static func detail(_ state: AppState, width: Int) -> [[Frame.Span]] {
        var fields: [(String, String, TextStyle)] = []
        if let account = state.selectedAccount {
            let provider = state.provider(named: account.id.provider)
            fields.append(
                ("Account", safe(account.label) + (account.displayName == nil ? "" : "  (sub \(safe(account.id.subject)))"), .normal))
            fields.append(("Issuer", safe(account.id.issuer), .normal))
            fields.append(("Redirect URI", provider?.redirectURITemplate.map(safe) ?? "—", .normal))
            fields.append(("Scopes", safe(account.scopes.joined(separator: " ")), .normal))
            if let expiresAt = account.expiresAt {
                let left = expiresAt.timeIntervalSince(state.now)
                let when = TimeText.timestamp(expiresAt)
                fields.append(
                    ("Expires", left > 0 ? "\(when) (in \(TimeText.short(left)))" : "\(when) (expired)", left > 0 ? .normal : .warning))
            } else {
                fields.append(("Expires", "not given by the provider", .normal))
            }
            fields.append(("Refresh token", account.hasRefreshToken ? "yes" : "no", .normal))
            fields.append(("Second factor", account.secondFactor.map(safe) ?? "none", .normal))
            if case .error(let reason) = state.status(of: account) {
                fields.append(("Last error", safe(reason), .error))
            } else {
                fields.append(("Last error", "none", .normal))
            }
            for role in account.awsRoles {
                let left = role.expiresAt.timeIntervalSince(state.now)
                let when = left > 0 ? "expires in \(TimeText.short(left))" : "expired"
                // The expiry first: a long role ARN is cut at the window's edge, never the time.
                fields.append(("AWS role", "\(when)  \(safe(role.roleARN)) as \(safe(role.sessionName))", left > 0 ? .normal : .warning))
            }
        } else if let provider = state.selectedProvider {
            fields.append(("Provider", "\(safe(provider.displayName)) (\(safe(provider.name)))", .normal))
            fields.append(("Issuer", provider.issuer.map(safe) ?? "— (OAuth 2.0, endpoints from the file)", .normal))
            fields.append(("Redirect URI", provider.redirectURITemplate.map(safe) ?? "—", .normal))
            fields.append(("Scopes", safe(provider.scopes.joined(separator: " ")), .normal))
            fields.append(("Sign-in", safe(provider.signInSummary), .normal))
            if let reason = state.providerErrors[provider.name] { fields.append(("Last error", safe(reason), .error)) }
        }
        return fields.map { label, value, style in
            line(width) { builder in
                builder.append(" " + DisplayWidth.fitted(label, to: 15), .dim)
                builder.append(value, style)
            }
        }
    }

    // MARK: - Flow screens

    static func unlock(_ prompt: UnlockPrompt, width: Int) -> [[Frame.Span]] {
        var lines: [[Frame.Span]] = [blank(width)]
        if prompt.creating {
            lines += paragraph("Creating the encrypted vault \(safe(prompt.vaultPath))", width: width, .accent)
        } else {
            lines += paragraph("The vault \(safe(prompt.vaultPath)) is locked.", width: width, .accent)
        }
        lines.append(blank(width))
        lines.append(
            line(width) { builder in
                builder.append(" \(prompt.prompt): ")
                builder.append(String(repeating: "•", count: min(prompt.typedCount, 64)) + "▏")
            })
        if let error = prompt.error {
            lines.append(blank(width))
            lines += paragraph(safe(error), width: width, .error)
        }
        return lines
    }

    static func help(width: Int) -> [[Frame.Span]] {
        let keys: [(String, String)] = [
            ("↑ ↓  j k", "move between providers and accounts"),
            ("Enter", "sign in (on an account row: that account again, as `login PROVIDER:ACCOUNT`)"),
            ("n", "add another account at the provider"),
            ("+", "add a provider from a preset, or an OpenID provider by its issuer"),
            ("r", "refresh the token now"),
            ("x", "sign out (asks first; revokes at the provider)"),
            ("c", "copy the access token to the clipboard (OSC 52)"),
            ("D", "make the account the default of its provider"),
            ("m", "make the account the one its provider means in this directory (config.toml)"),
            ("e", "enroll a phone as second factor (firebase accounts)"),
            ("/", "filter by name; Esc clears"),
            ("?", "this help"),
            ("q", "quit"),
        ]
        var lines: [[Frame.Span]] = [blank(width), line(width) { $0.append(" Keys", .accent) }, blank(width)]
        for (key, meaning) in keys {
            lines += paragraph(meaning, width: width, lead: " " + DisplayWidth.fitted(key, to: 12), leadStyle: .accent)
        }
        lines.append(blank(width))
        lines += paragraph("Tokens are refreshed a minute before they expire while this screen is open.", width: width, .dim)
        return lines
    }
}

extension TextStyle {
    fileprivate static func accentIfProvider(_ row: AppState.Row) -> TextStyle {
        if case .provider = row { return .accent }
        return .normal
    }
}

/// Short human durations for countdowns.
enum TimeText {
    /// `59:07` under an hour, `3h 05m` above, `expired` at or below zero.
    static func countdown(_ seconds: TimeInterval) -> String {
        guard seconds > 0 else { return "expired" }
        let total = Int(wholeSeconds: seconds)
        if total >= 3600 { return "\(total / 3600)h \(twoDigits(total % 3600 / 60))m" }
        return "\(twoDigits(total / 60)):\(twoDigits(total % 60))"
    }

    /// `45s`, `12m 03s`, `2h 10m`.
    static func short(_ seconds: TimeInterval) -> String {
        let total = max(0, Int(wholeSeconds: seconds))
        if total >= 3600 { return "\(total / 3600)h \(twoDigits(total % 3600 / 60))m" }
        if total >= 60 { return "\(total / 60)m \(twoDigits(total % 60))s" }
        return "\(total)s"
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
