import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault
import TOMLKit

/// Reads one provider file: TOML in, a `Provider` or every error found in it out.
///
/// Errors are collected rather than thrown at the first one, so a person fixing a file sees
/// all its problems in one run.
public struct ProviderFileParser {
    /// Keys a provider file may contain; anything else is an error (a typo must not be ignored).
    static let knownKeys: Set<String> = Set([
        "display_name", "kind", "issuer", "authorization_endpoint", "token_endpoint",
        "revocation_endpoint", "device_authorization_endpoint", "userinfo_endpoint", "jwks_uri",
        "client_id", "client_secret", "scopes", "extra_authorization_params", "redirect",
        "loopback_host", "loopback_port", "redirect_path", "account_id_field", "account_name_field",
        "git_hosts", "git_username", "registry_hosts", "registry_username", "forward", "confirm",
    ]).union(protocolChoiceKeys).union(awsKeys).union(identityKeys)

    /// Keys only `kind = "firebase"` files use.
    static let firebaseKeys: Set<String> = [
        "api_key", "project_id", "first_factor", "identitytoolkit_url", "securetoken_url", "mfa_backend",
    ]

    /// Keys a `kind = "firebase"` file may contain.
    static let firebaseAllowedKeys: Set<String> = firebaseKeys.union([
        "display_name", "kind", "jwks_uri", "redirect_path", "forward", "confirm",
    ]).union(awsKeys).union(identityKeys)

    /// Parameters Latchkey sends itself, in the authorization request or to the token, device and
    /// revocation endpoints: neither `extra_authorization_params` nor an endpoint URL's query may
    /// set one. Letting a file set them would undo PKCE, `state` or `nonce`, and a server that
    /// reads the first of two values would take the file's over Latchkey's; `request` and
    /// `request_uri` would replace the whole request (RFC 9101, RFC 9126). `login_hint` is the
    /// one the file may set: `--login-hint` replaces it. `ProviderFileParserTests` builds every
    /// request Latchkey sends and checks each of its parameters is here.
    static let reservedParameters: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
        "grant_type", "code", "code_verifier", "refresh_token", "client_secret", "device_code", "token", "token_type_hint",
        "request_uri", "request", "dpop_jkt", "resource", "acr_values", "max_age", "client_assertion", "client_assertion_type",
    ]

    /// The endpoint keys of an OAuth provider file.
    static let endpointKeys = [
        "authorization_endpoint", "token_endpoint", "revocation_endpoint", "device_authorization_endpoint", "userinfo_endpoint",
        "jwks_uri",
    ]

    public init() {}

    /// Parses `text`, read from `file`; the provider's name is the file stem.
    public func parse(_ text: String, file: String) -> Result<Provider, ProviderFileErrors> {
        var context = Context(file: file, text: text)
        let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
        if !Provider.isValidName(name) {
            context.fail(
                nil,
                "the file name must be letters, digits, '.', '_' or '-', not starting with '.' or '-', followed by .toml"
                    + " (it becomes the provider's name)")
        }

        if let problem = TOMLPreflight.problem(in: text) {
            return .failure(ProviderFileErrors([ProviderFileError(file: file, line: problem.line, message: problem.message)]))
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            return .failure(
                ProviderFileErrors([
                    ProviderFileError(
                        file: file, line: error.source.begin.line, message: "not valid TOML: \(TerminalText.sanitized(error.description))")
                ]))
        } catch {
            return .failure(ProviderFileErrors([ProviderFileError(file: file, message: "not valid TOML")]))
        }

        let sharing = AccountSharing.read(table, reader: &context, field: { $0 })
        let aws = context.awsSettings(table)
        let openBaoAddress = context.openBaoAddress(table)
        let googleAudience = context.googleAudience(table)
        let forwardsIdentityToken = context.forwardsIdentityToken(table)
        if table["kind"]?.string == "firebase" {
            return parseFirebase(table, name: name, context: &context).map { provider in
                var shared = provider
                shared.sharing = sharing
                shared.aws = aws
                shared.openBaoAddress = openBaoAddress
                shared.googleAudience = googleAudience
                shared.forwardsIdentityToken = forwardsIdentityToken
                return shared
            }
        }

        for key in table.keys.sorted() where !Self.knownKeys.contains(key) {
            if Self.firebaseKeys.contains(key) {
                context.fail(key, "only used by kind = \"firebase\" providers")
            } else {
                context.fail(key, "unknown key (known keys: see latchkey-providers(5))")
            }
        }

        let displayName = context.string(table, "display_name", required: true) ?? name
        let isOpenID = context.oneOf(table, "kind", Provider.kindNames, required: true) != "oauth2"
        let issuer = context.url(table, "issuer").map { $0.absoluteString }
        if let issuer, URLComponents(string: issuer)?.query != nil {
            context.fail("issuer", "must not contain a ?query or #fragment (RFC 8414 §2, OpenID Discovery §2)")
        }
        for key in Self.endpointKeys {
            guard let raw = table[key]?.string, let items = URLComponents(string: raw)?.queryItems else { continue }
            for name in Set(items.map(\.name)).sorted() where Self.reservedParameters.contains(name) {
                context.fail(key, "its query sets \(name), which Latchkey sends itself; remove it from the URL")
            }
        }
        var endpoints = OAuthClient.Endpoints()
        endpoints.authorization = context.url(table, "authorization_endpoint")
        endpoints.token = context.url(table, "token_endpoint")
        endpoints.revocation = context.url(table, "revocation_endpoint")
        endpoints.deviceAuthorization = context.url(table, "device_authorization_endpoint")
        endpoints.userinfo = context.url(table, "userinfo_endpoint")
        endpoints.jwks = context.url(table, "jwks_uri")

        if issuer == nil && !context.hasError(for: "issuer") {
            for (key, value) in [("authorization_endpoint", endpoints.authorization), ("token_endpoint", endpoints.token)]
            where value == nil {
                context.fail(key, "required when there is no issuer to discover it from")
            }
            if isOpenID && endpoints.jwks == nil {
                context.fail("jwks_uri", "required for kind \"oidc\" when there is no issuer to discover it from")
            }
        }

        let clientID = context.string(table, "client_id", required: false) ?? ""
        let clientSecret = context.string(table, "client_secret", required: false).map(Secret.init)
        let choices = context.protocolChoices(table)
        var scopes = context.stringArray(table, "scopes") ?? (isOpenID ? ["openid"] : [])
        if isOpenID && !scopes.contains("openid") { scopes.insert("openid", at: 0) }

        let extra = context.stringTable(table, "extra_authorization_params") ?? [:]
        for key in extra.keys.sorted() where Self.reservedParameters.contains(key) {
            context.fail("extra_authorization_params.\(key)", "Latchkey sets this parameter itself; remove it", lineKey: key)
        }

        let redirectMode = context.choice(table, "redirect", OAuthClient.RedirectMode.self, required: false) ?? .loopback
        var loopbackHost = OAuthClient.LoopbackHost.ipv4
        if let host = context.string(table, "loopback_host", required: false) {
            switch host {
            case "127.0.0.1": loopbackHost = .ipv4
            case "[::1]", "::1": loopbackHost = .ipv6
            case "localhost": loopbackHost = .localhost
            default: context.fail("loopback_host", "must be \"127.0.0.1\", \"[::1]\" or \"localhost\" (RFC 8252 §7.3 allows only loopback)")
            }
        }
        let redirectPath = context.string(table, "redirect_path", required: false) ?? "/oauth2redirect/\(name)"
        if !Self.isValidRedirectPath(redirectPath) {
            context.fail("redirect_path", Self.redirectPathRule)
        }
        let loopbackPorts = context.ports(table, "loopback_port")
        let accountIDField = context.string(table, "account_id_field", required: false) ?? "sub"
        let accountNameField = context.string(table, "account_name_field", required: false) ?? "email"
        let gitHosts = context.hosts(table, "git_hosts", example: "[\"gitlab.example.com\", \"git.example.com:8443\"]")
        let gitUsername = context.string(table, "git_username", required: false) ?? OAuthClient.defaultGitUsername
        if gitUsername.isEmpty || gitUsername.contains(where: { $0.isNewline || $0 == "\0" }) {
            context.fail("git_username", "must be a non-empty user name on one line (git reads it as username=…)")
        }
        let registryHosts = context.hosts(table, "registry_hosts", example: "[\"registry.example.com\", \"localhost:5000\"]")
        let registryUsername = context.string(table, "registry_username", required: false) ?? OAuthClient.defaultRegistryUsername
        if registryUsername.isEmpty || registryUsername.contains(where: { $0.isNewline || $0 == "\0" }) {
            context.fail("registry_username", "must be a non-empty user name on one line, such as \"oauth2accesstoken\" or \"<token>\"")
        }

        guard context.errors.isEmpty else { return .failure(ProviderFileErrors(context.errors)) }
        let client = OAuthClient(
            issuer: issuer, endpoints: endpoints, clientID: clientID, clientSecret: clientSecret, scopes: scopes,
            extraAuthorizationParameters: extra, redirectMode: redirectMode, loopbackHost: loopbackHost, redirectPath: redirectPath,
            loopbackPorts: loopbackPorts, accountFields: UserinfoAccountFields(id: accountIDField, name: accountNameField),
            gitHosts: gitHosts, gitUsername: gitUsername, registryHosts: registryHosts, registryUsername: registryUsername,
            choices: choices)
        var provider = Provider(name: name, displayName: displayName, kind: isOpenID ? .oidc(client) : .oauth2(client), sourceFile: file)
        provider.sharing = sharing
        provider.aws = aws
        provider.openBaoAddress = openBaoAddress
        provider.googleAudience = googleAudience
        provider.forwardsIdentityToken = forwardsIdentityToken
        return .success(provider)
    }

    /// A `kind = "firebase"` file: Firebase Authentication with an optional second factor.
    private func parseFirebase(_ table: TOMLTable, name: String, context: inout Context) -> Result<Provider, ProviderFileErrors> {
        for key in table.keys.sorted() where !Self.firebaseAllowedKeys.contains(key) {
            if Self.knownKeys.contains(key) {
                context.fail(key, "not used by kind = \"firebase\" providers (they take api_key, project_id, first_factor, …)")
            } else {
                context.fail(key, "unknown key (known keys: see latchkey-providers(5))")
            }
        }
        let displayName = context.string(table, "display_name", required: true) ?? name

        var backend = FirebaseSettings.Backend.firebase
        if let raw = context.string(table, "mfa_backend", required: false) {
            if raw == "firebase" {
                backend = .firebase
            } else if raw.hasPrefix("exec:"), raw.dropFirst(5).hasPrefix("/") {
                backend = .exec(path: String(raw.dropFirst(5)))
            } else {
                context.fail("mfa_backend", "must be \"firebase\" or \"exec:/absolute/path/to/program\" (see latchkey-mfa-plugin(7))")
            }
        }
        let needsProject = backend == .firebase
        let apiKey = context.string(table, "api_key", required: needsProject) ?? ""
        let projectID = context.string(table, "project_id", required: needsProject) ?? ""
        if !projectID.isEmpty && !projectID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            context.fail("project_id", "must be a Firebase project ID: letters, digits and '-'")
        }

        var firstFactor = FirebaseSettings.FirstFactorSource.password
        if let raw = context.string(table, "first_factor", required: false) {
            if raw == "password" {
                firstFactor = .password
            } else if raw.hasPrefix("provider:"), case let other = String(raw.dropFirst("provider:".count)), !other.isEmpty,
                other != name, Provider.isValidName(other)
            {
                firstFactor = .provider(other)
            } else {
                context.fail(
                    "first_factor", "must be \"password\" or \"provider:NAME\" naming another OpenID provider file in providers.d")
            }
        }

        var settings = FirebaseSettings(apiKey: apiKey, projectID: projectID, firstFactor: firstFactor, mfaBackend: backend)
        if let url = context.url(table, "identitytoolkit_url") { settings.identityToolkitURL = url }
        if let url = context.url(table, "securetoken_url") { settings.secureTokenURL = url }
        if let url = context.url(table, "jwks_uri") { settings.jwksURL = url }

        // Accepted for files written before firebase providers stopped borrowing the OpenID shape;
        // a firebase sign-in has no redirect of its own, so the value is only checked.
        if let redirectPath = context.string(table, "redirect_path", required: false), !Self.isValidRedirectPath(redirectPath) {
            context.fail("redirect_path", Self.redirectPathRule)
        }
        guard context.errors.isEmpty else { return .failure(ProviderFileErrors(context.errors)) }
        return .success(Provider(name: name, displayName: displayName, kind: .firebase(settings), sourceFile: context.file))
    }

    static let redirectPathRule =
        "must start with '/' and hold only letters, digits and -._~/, with no '//', '.' or '..' segment (a browser would rewrite it) and no query or fragment"

    /// A path a browser sends back exactly as written: no segment it would collapse (`//`) or
    /// resolve away (`.`, `..`), so the request arrives at the path the listener compares with.
    static func isValidRedirectPath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.count > 1, !path.contains("//"),
            path.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~/".contains($0)) })
        else { return false }
        return !path.split(separator: "/").contains { $0 == "." || $0 == ".." }
    }
}

/// All the errors of one provider file.
public struct ProviderFileErrors: Error, Sendable, Equatable {
    public var errors: [ProviderFileError]
    package init(_ errors: [ProviderFileError]) { self.errors = errors }
}

// MARK: - Field readers

extension ProviderFileParser {
    /// Reads fields and records errors with the line each field is on.
    struct Context {
        let file: String
        let lines: [Substring]
        var errors: [ProviderFileError] = []

        init(file: String, text: String) {
            self.file = file
            self.lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        }

        /// The 1-based line where `key` is assigned, found by scanning the text: TOMLKit keeps no
        /// source positions for values, and provider files are small.
        func line(of key: String) -> Int? {
            for (index, line) in lines.enumerated() {
                let trimmed = line.drop(while: { $0 == " " || $0 == "\t" || $0 == "{" })
                for candidate in [key, "\"\(key)\"", "'\(key)'"] where trimmed.hasPrefix(candidate) {
                    let rest = trimmed.dropFirst(candidate.count).drop(while: { $0 == " " || $0 == "\t" })
                    if rest.hasPrefix("=") { return index + 1 }
                }
                // Keys inside an inline table: `{ prompt = "x", login_hint = "y" }`.
                if line.contains("{") && (line.contains(" \(key) =") || line.contains("{\(key)=") || line.contains(" \(key)=")) {
                    return index + 1
                }
            }
            return nil
        }

        mutating func fail(_ field: String?, _ message: String, lineKey: String? = nil) {
            let lineNumber = (lineKey ?? field).flatMap { line(of: $0) }
            errors.append(ProviderFileError(file: file, line: lineNumber, field: field, message: message))
        }

        mutating func fail(_ field: String?, _ message: String, line: Int?) {
            errors.append(ProviderFileError(file: file, line: line, field: field, message: message))
        }

        /// The 1-based line of the table header naming `key` (`[directories."~/work"]`).
        func headerLine(containing key: String) -> Int? {
            lines.firstIndex { $0.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("[") && $0.contains(key) }.map { $0 + 1 }
        }

        func hasError(for field: String) -> Bool { errors.contains { $0.field == field } }

        mutating func string(_ table: TOMLTable, _ key: String, required: Bool) -> String? {
            guard let value = table[key] else {
                if required { fail(key, "missing (required)") }
                return nil
            }
            guard let string = value.string else {
                fail(key, "must be a string, found \(value.type)")
                return nil
            }
            if required && string.isEmpty { fail(key, "must not be empty") }
            return string
        }

        /// One of `Choice`'s raw values.
        mutating func choice<Choice: RawRepresentable & CaseIterable>(
            _ table: TOMLTable, _ key: String, _ type: Choice.Type, required: Bool
        ) -> Choice? where Choice.RawValue == String {
            oneOf(table, key, Choice.allCases.map(\.rawValue), required: required).flatMap(Choice.init(rawValue:))
        }

        /// One of `values`.
        mutating func oneOf(_ table: TOMLTable, _ key: String, _ values: [String], required: Bool) -> String? {
            guard let raw = string(table, key, required: required) else { return nil }
            if values.contains(raw) { return raw }
            let names = values.map { "\"\($0)\"" }.joined(separator: ", ")
            fail(key, "\"\(TerminalText.sanitized(raw, maxLength: 40))\" is not one of \(names)")
            return nil
        }

        /// An endpoint URL: absolute, https unless the host is a loopback address.
        mutating func url(_ table: TOMLTable, _ key: String) -> URL? {
            guard let raw = string(table, key, required: false) else { return nil }
            switch EndpointURL.validate(raw) {
            case .success(let url): return url
            case .failure(let problem):
                fail(key, problem.description)
                return nil
            }
        }

        /// A whole number of `unit` in `range` at `key` of the table named `section` (`""` for
        /// the top level), or `nil` with an error naming it when the value is anything else.
        mutating func wholeNumber(
            _ table: TOMLTable, _ key: String, in range: ClosedRange<Int>, unit: String, section: String = ""
        ) -> Int? {
            guard let value = table[key] else { return nil }
            if let number = value.int, range.contains(number) { return number }
            let bounds = range.upperBound == .max ? ", \(range.lowerBound) or more" : " from \(range.lowerBound) to \(range.upperBound)"
            fail(section.isEmpty ? key : "\(section).\(key)", "must be a whole number of \(unit)\(bounds)", lineKey: key)
            return nil
        }

        /// An error for each key of `table` (named `section`, `""` for the top level) not in `known`.
        mutating func unknownKeys(of table: TOMLTable, known: [String], section: String = "", line: Int? = nil) {
            for key in table.keys.sorted() where !known.contains(key) {
                let field = section.isEmpty ? key : "\(section).\(key)"
                let message = "unknown key (known: \(known.joined(separator: ", ")))"
                if let line { fail(field, message, line: line) } else { fail(field, message, lineKey: key) }
            }
        }

        /// `loopback_port`: one port, or a list tried in order; 1024–65535 (no root needed).
        mutating func ports(_ table: TOMLTable, _ key: String) -> [Int] {
            guard let value = table[key] else { return [] }
            let values = value.array.map { Array($0) } ?? [value]
            let ports = values.compactMap { $0.int }
            guard ports.count == values.count, !ports.isEmpty, ports.allSatisfy({ (1024...65_535).contains($0) }) else {
                fail(key, "must be a port from 1024 to 65535, or a list of them such as [38100, 38101]")
                return []
            }
            return ports
        }

        /// `git_hosts`, `registry_hosts`: `host[:port]` entries; each bad one is named in its own error.
        mutating func hosts(_ table: TOMLTable, _ key: String, example: String) -> [GitHost] {
            guard let value = table[key] else { return [] }
            guard let array = value.array else {
                fail(key, "must be an array of strings such as \(example), found \(value.type)")
                return []
            }
            var hosts: [GitHost] = []
            for element in array {
                guard let text = element.string else {
                    fail(key, "every element must be a string \"host\" or \"host:port\", found \(element.type)")
                    continue
                }
                switch GitHost.parse(text) {
                case .success(let host): hosts.append(host)
                case .failure(let problem): fail(key, "\"\(TerminalText.sanitized(text, maxLength: 80))\" \(problem)")
                }
            }
            return hosts
        }

        mutating func stringArray(_ table: TOMLTable, _ key: String) -> [String]? {
            guard let value = table[key] else { return nil }
            guard let array = value.array else {
                fail(key, "must be an array of strings, found \(value.type)")
                return nil
            }
            var strings: [String] = []
            for element in array {
                guard let string = element.string, !string.isEmpty, !string.contains(" ") else {
                    fail(key, "every element must be a non-empty string without spaces")
                    return nil
                }
                strings.append(string)
            }
            return strings
        }

        mutating func stringTable(_ table: TOMLTable, _ key: String) -> [String: String]? {
            guard let value = table[key] else { return nil }
            guard let inner = value.table else {
                fail(key, "must be a table of strings, such as { prompt = \"select_account\" }, found \(value.type)")
                return nil
            }
            var result: [String: String] = [:]
            for innerKey in inner.keys {
                guard let string = inner[innerKey]?.string else {
                    fail("\(key).\(innerKey)", "must be a string", lineKey: innerKey)
                    continue
                }
                result[innerKey] = string
            }
            return result
        }
    }
}
