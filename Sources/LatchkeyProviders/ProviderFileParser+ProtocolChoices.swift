import Foundation
import TOMLKit

/// The provider file keys of `ProtocolChoices`: PAR, DPoP and resources.
extension ProviderFileParser {
    static let protocolChoiceKeys: Set<String> = [
        "par", "dpop", "resources", "grant", "client_secret_file", "private_key_file", "private_key_id", "git_resource",
        "registration", "mcp_url",
    ]
}

extension ProviderFileParser.Context {
    /// Reads the `ProtocolChoices` keys.
    mutating func protocolChoices(_ table: TOMLTable) -> ProtocolChoices {
        var choices = ProtocolChoices()
        choices.pushedAuthorization = choice(table, "par", ProtocolChoices.Use.self, required: false) ?? .auto
        choices.proofOfPossession = choice(table, "dpop", ProtocolChoices.Use.self, required: false) ?? .auto
        for resource in stringArray(table, "resources") ?? [] {
            if let problem = ResourceIndicator.problem(resource) {
                fail("resources", problem)
            } else {
                choices.resources.append(resource)
            }
        }
        if let resource = string(table, "git_resource", required: false) {
            if let problem = ResourceIndicator.problem(resource) { fail("git_resource", problem) } else { choices.gitResource = resource }
        }
        choices.mcpURL = url(table, "mcp_url")
        if let mcpURL = choices.mcpURL, !choices.resources.contains(mcpURL.absoluteString), !hasError(for: "resources") {
            fail("mcp_url", "must also be listed in resources, so that its tokens are bound to it (RFC 8707)")
        }
        choices.grant = choice(table, "grant", ProtocolChoices.Grant.self, required: false) ?? .authorizationCode
        choices.clientSecretFile = absolutePath(table, "client_secret_file")
        choices.privateKeyFile = absolutePath(table, "private_key_file")
        choices.privateKeyID = string(table, "private_key_id", required: false)
        choices.registration = choice(table, "registration", ProtocolChoices.Registration.self, required: false) ?? .preRegistered
        if choices.clientSecretFile != nil && choices.privateKeyFile != nil {
            fail("private_key_file", "cannot be used with client_secret_file: the client authenticates with one or the other")
        }
        if choices.privateKeyFile != nil && choices.grant != .clientCredentials {
            fail("private_key_file", "is used only with grant = \"client_credentials\"")
        }
        if choices.privateKeyID != nil && choices.privateKeyFile == nil && !hasError(for: "private_key_file") {
            fail("private_key_id", "names the key in private_key_file, which is missing")
        }
        if choices.grant == .clientCredentials && choices.clientSecretFile == nil && choices.privateKeyFile == nil
            && !hasError(for: "client_secret_file") && !hasError(for: "private_key_file")
        {
            fail(
                "grant",
                "\"client_credentials\" needs client_secret_file, a 0600 file holding the client secret, or private_key_file, a 0600 PEM private key (private_key_jwt)"
            )
        }
        if choices.registration == .dynamic {
            dynamicRegistrationProblems(table, choices)
        }
        return choices
    }

    /// What `registration = "dynamic"` cannot go with: a client of the file's own, and sign-ins
    /// that are not a person's at a loopback redirect (the only client Latchkey registers).
    private mutating func dynamicRegistrationProblems(_ table: TOMLTable, _ choices: ProtocolChoices) {
        for key in ["client_id", "client_secret"] where table[key] != nil {
            fail(key, "cannot be used with registration = \"dynamic\": the client is registered at the first sign-in; remove one of them")
        }
        if choices.grant == .clientCredentials {
            fail("registration", "\"dynamic\" registers a client for people signing in, not for grant = \"client_credentials\"")
        }
        if table["redirect"]?.string == OAuthClient.RedirectMode.device.rawValue {
            fail("registration", "\"dynamic\" registers a client with loopback redirect URIs, which redirect = \"device\" does not use")
        }
        if table["issuer"] == nil {
            fail("registration", "\"dynamic\" needs issuer: the registration_endpoint is read from its discovery document")
        }
    }

    /// A file path key that must be absolute: the command may run from any directory.
    private mutating func absolutePath(_ table: TOMLTable, _ key: String) -> String? {
        guard let path = string(table, key, required: false) else { return nil }
        guard path.hasPrefix("/") else {
            fail(key, "must be an absolute path")
            return nil
        }
        return path
    }
}
