public import Foundation
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
}
