import Foundation
import LatchkeyEssentials
public import LatchkeyProviders

/// What a forwarded host (`ssh -R`) may ask the agent for with an account, in words: what
/// `latchkey doctor` says for each provider file and each `[accounts."…"]` table, from the facts
/// `ReleaseDecision` decides by (`Named`), so the explanation cannot drift from the rule.
public enum ForwardedReach {
    /// Where an account's `forward` comes from, for the explanation.
    public enum Source: Sendable, Equatable {
        /// The provider file's `forward`, or its absence.
        case providerFile
        /// config.toml's `[accounts."SELECTOR"]` table.
        case accountsTable(selector: String)
    }

    /// One sentence: nothing when `forward` is off, else each kind of request and its limit.
    public static func explanation(of provider: Provider, forward: Bool, source: Source) -> String {
        let setting: String
        switch source {
        case .providerFile: setting = forward ? "forward = true in its provider file" : "forward is not set in its provider file"
        case .accountsTable(let selector):
            setting = "forward = \(forward) in config.toml's [accounts.\"\(TerminalText.sanitized(selector, maxLength: 200))\"]"
        }
        guard forward else { return "\(setting): a forwarded host gets nothing, and is told no shared account answers" }
        let resources = provider.listedResources.joined(separator: ", ")
        let narrowed = resources.isEmpty ? nil : "narrowed to \(resources)"
        let clouds = provider.identityClouds.joined(separator: ", ")
        let ownAccessToken = "its access token" + (narrowed.map { " or one \($0)" } ?? "")
        let heldBack = "which \(clouds) take as the account (forward_id_token = true would release it)"
        var reach: [String] = []
        if provider.forwardsIdentityTokens {
            reach.append(ownAccessToken)
            reach.append(
                clouds.isEmpty ? "its ID token" : "its ID token (forward_id_token = true, although \(clouds) take it as the account)")
        } else if provider.accessTokenIsIdentity {
            if let narrowed { reach.append("access tokens \(narrowed)") }
            reach.append("never its access token (aws_web_identity_token) or its ID token, \(heldBack)")
        } else {
            reach.append(ownAccessToken)
            reach.append("never its ID token, \(heldBack)")
        }
        let roles = provider.aws.listedRoles
        if !roles.isEmpty || provider.aws.stsEndpoint != nil {
            let endpoint = provider.aws.stsEndpoint.map { "from \($0.absoluteString)" } ?? "from the agent's own STS endpoint"
            reach.append(
                roles.isEmpty
                    ? "no AWS credentials (the file lists no role)"
                    : "AWS credentials for \(roles.joined(separator: ", ")) only, \(endpoint)")
        }
        if let mcpURL = provider.protocolChoices?.mcpURL { reach.append("DPoP proofs for \(mcpURL.absoluteString) only") }
        if !provider.gitHosts.isEmpty {
            reach.append("git credentials for " + provider.gitHosts.map(\.description).joined(separator: ", "))
        }
        if !provider.registryHosts.isEmpty {
            reach.append("registry credentials for " + provider.registryHosts.map(\.description).joined(separator: ", "))
        }
        return "\(setting): a forwarded host may ask for " + reach.joined(separator: "; ")
    }
}
