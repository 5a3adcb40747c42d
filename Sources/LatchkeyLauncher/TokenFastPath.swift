import CLatchkeySys
public import LatchkeyEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey token SELECTOR [--min-ttl N]` (and `mcp headers SELECTOR`) answered from the kernel
/// keyring, before Foundation or the vault are touched: two key reads, three stat(2) calls at most
/// (the policy files' fingerprint) and a write.
///
/// A copy that is missing, in a format it does not know, or no longer valid by `TokenValidity`
/// returns `nil` and the next answer is tried (the vault, then the full command, which refreshes
/// and writes new copies).
public enum TokenFastPath {
    /// Prints the token and returns the exit status, or `nil` to let another answer come.
    /// `selector` is spelled as `AccountSelector.description` spells it, as the keys are.
    /// `narrowing` asks for the copy of a token got with `--resource`/`--scope` (scopes sorted).
    /// With `asMCPHeader`, the token is printed as `mcp headers` prints it, and a DPoP-bound one
    /// not at all (the full command says why).
    /// `origin`: whose copies (`LauncherDirectory.origin`).
    public static func run(
        selector: String, narrowing: (resource: String?, scopes: [String])? = nil, minimumLifetime: Int, asMCPHeader: Bool = false,
        from origin: CopiesOrigin
    ) -> Int32? {
        let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
        // A selector's provider is what comes before its first colon (provider names have none).
        let provider = String(decoding: selector.utf8.prefix { $0 != UInt8(ascii: ":") }, as: UTF8.self)
        guard let policy = PolicyFiles.currentFingerprint(ofProvider: provider, environment),
            let copy = token(
                selector: selector, narrowing: narrowing, minimumLifetime: minimumLifetime, origin: origin, policy: policy,
                now: time(nil))
        else { return nil }
        var token = copy.token
        if asMCPHeader {
            guard !copy.proofBound else { return nil }
            token = mcpHeader(token)
        }
        token.append(UInt8(ascii: "\n"))
        let written = token.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        return written == token.count ? 0 : nil
    }

    /// The copied token for `selector` among `origin`'s copies if `origin` passes its check
    /// (`CopiesOrigin.passesCheck`: the full command refuses anything else with its own message,
    /// so no answer from the keyring may bypass that), the copy was made under the policy files
    /// as they are now (`policy`, their fingerprint: a provider file or config.toml edited since
    /// may say `confirm = true`), and the token is valid `minimumLifetime` seconds from `now`.
    public static func token(
        selector: String, narrowing: (resource: String?, scopes: [String])? = nil, minimumLifetime: Int, origin: CopiesOrigin,
        policy: String, now: Int
    ) -> (token: [UInt8], proofBound: Bool)? {
        let vault = origin.location
        let key =
            narrowing.map {
                TokenCopy.narrowedKeyDescription(vaultPath: vault, selector: selector, resource: $0.resource, scopes: $0.scopes)
            } ?? TokenCopy.selectorKeyDescription(vaultPath: vault, selector: selector)
        guard origin.passesCheck,
            let alias = read(key),
            case .alias(let account, policy) = TokenCopy.decode(alias),
            let payload = read(TokenCopy.accountKeyDescription(vaultPath: vault, account: account)),
            case .token(let issuedAt, let expiresAt, let token, let proofBound) = TokenCopy.decode(payload)
        else { return nil }
        if let expiresAt {
            guard TokenValidity.isValid(issuedAt: issuedAt, expiresAt: expiresAt, now: now, margin: minimumLifetime) else { return nil }
        }
        return (token, proofBound)
    }

    /// `{"Authorization":"Bearer TOKEN"}`, byte for byte what the full command's JSON encoder
    /// prints (sorted keys, slashes as they are): a token is visible ASCII, checked when it was
    /// received, so only `"` and `\\` need escaping; anything below a space is escaped as JSON
    /// says, should a copy ever hold one.
    static func mcpHeader(_ token: [UInt8]) -> [UInt8] {
        var json = Array(#"{"Authorization":"Bearer "#.utf8)
        for byte in token {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): json += [UInt8(ascii: "\\"), byte]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                json += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: json.append(byte)
            }
        }
        return json + Array(#""}"#.utf8)
    }

    /// `aws-credential`'s answer as the full command kept it (`TokenCopy.Entry.answer`), printed
    /// as it is: while it may be used, `origin` passes its check and the policy files are as they
    /// were when it was kept.
    public static func runAWSCredential(selector: String, options: AWSRoleOptions, from origin: CopiesOrigin) -> Int32? {
        let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
        let key = TokenCopy.awsAnswerKeyDescription(
            vaultPath: origin.location, selector: selector, options: options, environment: AWSRoleOptions.environment(environment))
        let provider = String(decoding: selector.utf8.prefix { $0 != UInt8(ascii: ":") }, as: UTF8.self)
        guard
            let text = answer(
                key: key, origin: origin, policy: PolicyFiles.currentFingerprint(ofProvider: provider, environment), now: time(nil))
        else { return nil }
        let written = text.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        return written == text.count ? 0 : nil
    }

    /// The answer kept under `key`, if `origin` passes its check, the answer was kept under the
    /// policy files' fingerprint `policy` and may still be used at `now`.
    public static func answer(key: String, origin: CopiesOrigin, policy: String?, now: Int) -> [UInt8]? {
        guard let policy, origin.passesCheck, let payload = read(key),
            case .answer(let usableUntil, policy, let text) = TokenCopy.decode(payload), now < usableUntil
        else { return nil }
        return text
    }

    private static func read(_ description: String) -> [UInt8]? {
        KeyringPayload.read(description: description).flatMap { $0.isEmpty ? nil : $0 }
    }
}
