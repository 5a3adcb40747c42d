public import Foundation
import LatchkeyOAuth
public import LatchkeyVault

/// `latchkey proof`: what a client needs to use a DPoP-bound token (RFC 9449 §7) at a resource
/// server, made with the account's key, which never leaves Latchkey.
extension AccountService {
    /// A proof for `method` `url` carrying `ath` for `token`, the access token the request sends;
    /// `nonce` is the resource server's, when it asked for one (RFC 9449 §9).
    public func proof(for record: AccountRecord, token: Secret, method: String, url: URL, nonce: String?) throws -> String {
        guard let key = try engine.proofKey(of: record) else { throw DPoPError.notBound(account: record.label, provider: record.provider) }
        return key.proof(method: method, url: url, at: engine.now(), nonce: nonce, accessToken: token)
    }

    /// A proof for `method` `url` for the access token of `record` whose `ath` is `tokenHash`:
    /// its own or one of its kept narrowed tokens (all bound to the account's key), for a client
    /// that holds the token but not the key. A proof for any other token (an old one, or one the
    /// client never got here) is refused unsigned (`DPoPError.notCurrentToken`).
    public func proof(for record: AccountRecord, tokenHash: String, method: String, url: URL, nonce: String?) throws -> String {
        let tokens = [record.accessToken] + (record.narrowedTokens ?? []).map(\.accessToken)
        guard let token = tokens.first(where: { DPoPKey.accessTokenHash($0) == tokenHash }) else {
            throw DPoPError.notCurrentToken(account: record.label, provider: record.provider)
        }
        return try proof(for: record, token: token, method: method, url: url, nonce: nonce)
    }
}
