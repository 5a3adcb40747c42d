public import Foundation
import LatchkeySupport
public import LatchkeyVault

/// Plays the person in a browser for the demo OpenID provider: opens the authorization URL,
/// fills in the login form as the demo user, submits it and follows the redirect back to
/// Latchkey's loopback listener. Only `latchkey demo` has it; it is labelled as such on screen.
public struct DemoBrowser: Sendable {
    let username: String
    let password: String
    let transport: any HTTPTransport

    /// Signs in as the demo's OpenID user.
    public static let demoUser = DemoBrowser(username: DemoSession.openIDUsername, password: DemoSession.password)

    init(username: String, password: String, transport: any HTTPTransport = LiveHTTPTransport()) {
        self.username = username
        self.password = password
        self.transport = transport
    }

    /// Signs in at `authorizationURL` and delivers the redirect; returns once the listener answered.
    public func signIn(at authorizationURL: URL) async throws(DemoBrowserError) {
        let page = try await send(HTTPRequest(method: .get, url: authorizationURL, headers: [("Accept", "text/html")]))
        guard page.status == 200 else { throw .unexpected("the authorization endpoint answered HTTP \(page.status)") }
        let form = try LoginForm(html: String(decoding: page.body, as: UTF8.self), page: authorizationURL)
        let fields = form.hiddenFields + [("username", username), ("password", password), ("action", "login")]
        let submitted = try await send(HTTPRequest.form(form.action, fields))
        guard submitted.status == 302 || submitted.status == 303,
            let location = submitted.headers.first(where: { $0.0.lowercased() == "location" })?.1, let redirect = URL(string: location)
        else { throw .unexpected("the login form answered HTTP \(submitted.status) without a redirect") }
        let landed = try await send(HTTPRequest(method: .get, url: redirect, headers: [("Accept", "text/html")]))
        guard landed.status == 200 else { throw .unexpected("Latchkey's redirect listener answered HTTP \(landed.status)") }
    }

    /// Approves a device-code sign-in: opens the verification page, types `userCode` and the demo
    /// user's password into its form, as a person on another device would. Latchkey's polling
    /// then finishes the sign-in.
    public func approveDevice(at verificationURI: URL, userCode: String) async throws(DemoBrowserError) {
        let page = try await send(HTTPRequest(method: .get, url: verificationURI, headers: [("Accept", "text/html")]))
        guard page.status == 200 else { throw .unexpected("the verification page answered HTTP \(page.status)") }
        let form = try LoginForm(html: String(decoding: page.body, as: UTF8.self), page: verificationURI)
        let fields = form.hiddenFields + [("user_code", userCode), ("username", username), ("password", password)]
        let approved = try await send(HTTPRequest.form(form.action, fields))
        guard approved.status == 200 else { throw .unexpected("the verification page refused the code (HTTP \(approved.status))") }
    }

    private func send(_ request: HTTPRequest) async throws(DemoBrowserError) -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            throw .unexpected(error.description)
        }
    }
}

/// The login page's form: where it posts and the hidden fields it carries.
struct LoginForm {
    var action: URL
    var hiddenFields: [(String, String)]

    init(html: String, page: URL) throws(DemoBrowserError) {
        guard let form = html.firstMatch(of: #/<form[^>]*action="([^"]*)"/#), let action = URL(string: String(form.1), relativeTo: page)
        else { throw .unexpected("no form on the page") }
        self.action = action.absoluteURL
        hiddenFields = html.matches(of: #/<input type="hidden" name="([^"]*)" value="([^"]*)">/#).map {
            (Self.unescape(String($0.1)), Self.unescape(String($0.2)))
        }
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// Why the demo browser could not finish.
public enum DemoBrowserError: LatchkeyError {
    case unexpected(String)

    public var category: FailureCategory { .unavailable }

    public var description: String {
        switch self {
        case .unexpected(let what): return "the demo browser could not sign in: \(what)"
        }
    }
}
