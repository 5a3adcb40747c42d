import Foundation
import IdentityToolkitEmulator

/// The demo provider's HTML: plain forms with no script or style sheet, so any browser (a text
/// browser too, or the demo's own scripted one) can sign in.
enum DemoPages {
    static func login(requestID: String, loginHint: String?, problem: String?) -> EmulatorResponse {
        page(
            title: "Sign in to Demo OpenID",
            """
            <p>Latchkey's demo provider. Sign in as <b>ada</b> with the password <b>lovelace-demo</b>.</p>
            \(problem.map { "<p role=\"alert\"><b>\(escape($0))</b></p>" } ?? "")
            <form method="post" action="/authorize">
            <input type="hidden" name="request_id" value="\(escape(requestID))">
            <p><label>Username <input type="text" name="username" value="\(escape(loginHint ?? ""))" autocomplete="username"></label></p>
            <p><label>Password <input type="password" name="password" autocomplete="current-password"></label></p>
            <p><button type="submit" name="action" value="login">Sign in</button>
            <button type="submit" name="action" value="cancel">Cancel</button></p>
            </form>
            """, status: problem == nil ? 200 : 401)
    }

    static func device(userCode: String, problem: String?) -> EmulatorResponse {
        page(
            title: "Connect a device to Demo OpenID",
            """
            <p>Type the code Latchkey shows, then sign in as <b>ada</b> / <b>lovelace-demo</b>.</p>
            \(problem.map { "<p role=\"alert\"><b>\(escape($0))</b></p>" } ?? "")
            <form method="post" action="/device">
            <p><label>Code <input type="text" name="user_code" value="\(escape(userCode))"></label></p>
            <p><label>Username <input type="text" name="username" autocomplete="username"></label></p>
            <p><label>Password <input type="password" name="password" autocomplete="current-password"></label></p>
            <p><button type="submit">Approve</button></p>
            </form>
            """, status: problem == nil ? 200 : 400)
    }

    static func home(issuer: String) -> EmulatorResponse {
        page(
            title: "Demo OpenID",
            "<p>An OpenID provider for <code>latchkey demo</code>. Discovery: <a href=\"/.well-known/openid-configuration\">\(escape(issuer))/.well-known/openid-configuration</a></p>"
        )
    }

    static func message(_ title: String, _ text: String) -> EmulatorResponse { page(title: title, "<p>\(escape(text))</p>") }

    static func problem(_ text: String, status: Int) -> EmulatorResponse {
        page(title: "Demo OpenID: error", "<p>\(escape(text))</p>", status: status)
    }

    /// The body of a 302, for a browser that does not follow `Location`.
    static func redirectNotice(_ location: String) -> String {
        "<!DOCTYPE html><title>Redirecting</title><p>Continue to <a href=\"\(escape(location))\">Latchkey</a>.</p>"
    }

    static func page(title: String, _ body: String, status: Int = 200) -> EmulatorResponse {
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title></head>
            <body><h1>\(escape(title))</h1>
            \(body)
            </body></html>
            """
        return EmulatorResponse(
            status: status, body: Array(html.utf8), contentType: "text/html; charset=utf-8",
            headers: [("Cache-Control", "no-store"), ("X-Frame-Options", "DENY"), ("Content-Security-Policy", "default-src 'none'")])
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
