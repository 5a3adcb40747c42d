import LatchkeySupport

/// A userinfo answer (OIDC Core §5.3.2), or what a plain OAuth 2.0 API answers about the signed-in
/// person (GitHub's `/user`). The members that name the account are configurable
/// (`account_id_field`, `account_name_field`), so they are kept by name.
package struct UserinfoResponse: Decodable, Sendable {
    var members: [String: JSONValue]

    package init(from decoder: any Decoder) throws {
        members = try [String: JSONValue](from: decoder)
    }

    /// The member `name` as text: a string, or a number written out (GitHub's numeric `id`);
    /// `nil` when it is absent or anything else (a boolean is never `1`).
    func text(_ name: String) -> String? {
        members[name]?.text
    }

    /// The account's subject and display name, read from the members named by `idField` and
    /// `nameField`; the subject is `nil` when its member is missing, empty or not text.
    func account(idField: String, nameField: String) -> (subject: String?, displayName: String?) {
        (text(idField).flatMap { $0.isEmpty ? nil : $0 }, text(nameField))
    }
}
