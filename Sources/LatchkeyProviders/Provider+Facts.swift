import Foundation

/// What the command line, the screen, git and `doctor` ask about a provider, answered here once
/// for every kind, so that only code whose behaviour differs by kind (the sign-in flow, the
/// OAuth engine, refresh and revocation) switches on `kind`.
extension Provider {
    /// The issuer identifier: the configured one of an OAuth provider (none when the file gives
    /// only endpoints), the securetoken issuer of a firebase project.
    public var issuer: String? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.issuer
        case .firebase(let settings): return settings.issuer
        }
    }

    /// The scopes a sign-in asks for; a firebase sign-in asks for none.
    public var scopes: [String] {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.scopes
        case .firebase: return []
        }
    }

    /// How the authorization response comes back; `nil` for firebase, whose own sign-in has no
    /// redirect (a federated first factor has its provider's).
    public var redirectMode: OAuthClient.RedirectMode? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.redirectMode
        case .firebase: return nil
        }
    }

    /// `par`, `dpop`, `grant`, `registration` and the rest of the newer protocol's choices; `nil`
    /// for firebase, which speaks none of it.
    public var protocolChoices: ProtocolChoices? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.choices
        case .firebase: return nil
        }
    }

    /// The redirect URI with its port open (`http://127.0.0.1:PORT/oauth2redirect/NAME`), also of
    /// a device-code provider (`login --paste` uses it); `nil` for firebase, which has none.
    public var redirectURITemplate: String? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.redirectURITemplate
        case .firebase: return nil
        }
    }

    /// The loopback host a browser sign-in listens on, for the providers that listen there.
    public var listeningHost: OAuthClient.LoopbackHost? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.redirectMode == .loopback ? client.loopbackHost : nil
        case .firebase: return nil
        }
    }

    /// `git_hosts`: the hosts whose remotes `git-credential` answers with this provider's token.
    public var gitHosts: [GitHost] {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.gitHosts
        case .firebase: return []
        }
    }

    /// `git_username`: the user name git gets with the token.
    public var gitUsername: String {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.gitUsername
        case .firebase: return OAuthClient.defaultGitUsername
        }
    }

    /// `git_resource`: the API (RFC 8707) git's token is narrowed to, if any.
    public var gitResource: String? {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.choices.gitResource
        case .firebase: return nil
        }
    }

    /// The APIs the provider file names (`resources`, then `git_resource`): the only resources the
    /// agent narrows a token to for a forwarded host, which must not choose what the vault keeps.
    public var listedResources: [String] {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.choices.resources + (client.choices.gitResource.map { [$0] } ?? [])
        case .firebase: return []
        }
    }

    /// This provider with `extra` asked for at sign-in too (`login --resource`, or a sign-in again
    /// for a `--resource`), after the file's `resources` and moved last when listed there:
    /// glewlwyd heeds only the last one. `nil` for a firebase provider, which has no resources.
    public func naming(resources extra: [String]) -> Provider? {
        func naming(_ client: OAuthClient) -> OAuthClient {
            var client = client
            client.choices.resources = client.choices.resources.filter { !extra.contains($0) } + extra
            return client
        }
        var provider = self
        switch kind {
        case .oidc(let client): provider.kind = .oidc(naming(client))
        case .oauth2(let client): provider.kind = .oauth2(naming(client))
        case .firebase: return nil
        }
        return provider
    }

    /// The provider asking for `scopes` at a sign-in instead of the file's own: a sign-in for more
    /// scope a person accepted (`login --scope`, a server's `insufficient_scope`). A firebase
    /// sign-in asks for none.
    public mutating func askFor(scopes: [String]) {
        switch kind {
        case .oidc(var client):
            client.scopes = scopes
            kind = .oidc(client)
        case .oauth2(var client):
            client.scopes = scopes
            kind = .oauth2(client)
        case .firebase:
            return
        }
    }

    /// `registry_hosts`: the container registries `docker-credential-latchkey` answers for.
    public var registryHosts: [GitHost] {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.registryHosts
        case .firebase: return []
        }
    }

    /// `registry_username`: the user name a registry gets with the token.
    public var registryUsername: String {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.registryUsername
        case .firebase: return OAuthClient.defaultRegistryUsername
        }
    }

    /// Accounts of this provider can enroll a phone as a second factor.
    public var enrollsPhones: Bool {
        if case .firebase = kind { return true }
        return false
    }

    /// `--paste` and `--device` choose how a browser sign-in returns: there is one unless this is
    /// a firebase provider signing in with email and password.
    public var hasBrowserSignIn: Bool {
        switch kind {
        case .oidc, .oauth2: return true
        case .firebase(let settings): return settings.firstFactor != .password
        }
    }

    /// How a sign-in goes, in a few words (the screen's detail pane).
    public var signInSummary: String {
        switch kind {
        case .oidc(let client), .oauth2(let client): return client.redirectMode.rawValue
        case .firebase(let settings):
            switch settings.firstFactor {
            case .password: return "email and password, then a second factor"
            case .provider(let name): return "a sign-in at \(name), then a second factor"
            }
        }
    }
}

extension Provider {
    /// The keys of this provider file naming clouds that take the account's identity token as the
    /// account: AWS roles or an STS endpoint, an OpenBao address, a Google audience. Where there
    /// is one, a forwarded host gets only what the agent makes from that token through them
    /// (`ReleaseDecision.Named.identityToken`), unless `forward_id_token = true`.
    public var identityClouds: [String] {
        var keys: [String] = []
        if aws.roleARN != nil { keys.append("aws_role_arn") }
        if !aws.roles.isEmpty { keys.append("aws_roles") }
        if aws.stsEndpoint != nil { keys.append("aws_sts_endpoint") }
        if openBaoAddress != nil { keys.append("openbao_address") }
        if googleAudience != nil { keys.append("gcp_audience") }
        return keys
    }

    /// Whether a forwarded host may hold the account's identity token: the ID token, and the
    /// access token when it is the one STS takes (`aws_web_identity_token = "access_token"`).
    public var forwardsIdentityTokens: Bool { forwardsIdentityToken || identityClouds.isEmpty }

    /// Whether the access token is an identity token STS takes as the account.
    public var accessTokenIsIdentity: Bool { aws.webIdentityToken == .accessToken }
}
