public import Foundation
import LatchkeySupport
import LatchkeyVault
import TOMLKit

/// `[openbao]` in config.toml: the OpenBao cluster that is to keep the accounts (a KV version 2
/// engine at `mount`, one secret per account under `path`) and how Latchkey logs in there.
public struct OpenBaoSettings: Sendable, Equatable {
    /// How Latchkey gets the token it sends to OpenBao.
    public enum Login: Sendable, Equatable {
        /// `token_file`: a file of the owner's alone (0600) holding the token.
        case tokenFile(String)
        /// `approle_role_id` and `approle_secret_id_file`: an AppRole login, as runners have.
        case appRole(roleID: String, secretIDFile: String)
        /// Neither: `BAO_TOKEN`, else `VAULT_TOKEN`, from the environment.
        case environment
    }

    /// `addresses`: the nodes' API addresses, tried in order.
    public var addresses: [URL]
    /// `mount`: where the KV version 2 engine is mounted (`secret` unless set).
    public var mount = "secret"
    /// `path`: under which the accounts are kept in that engine.
    public var path: String
    public var login = Login.environment

    public init(addresses: [URL], mount: String = "secret", path: String, login: Login = .environment) {
        self.addresses = addresses
        self.mount = mount
        self.path = path
        self.login = login
    }

    static let keys = ["addresses", "mount", "path", "token_file", "approle_role_id", "approle_secret_id_file"]

    /// The table read and checked, each problem an error with its line; `nil` when any is wrong.
    static func read(_ value: any TOMLValueConvertible, reader: inout ProviderFileParser.Context) -> OpenBaoSettings? {
        guard let table = value.table else {
            reader.fail("openbao", "must be a table: [openbao] with addresses, mount and path")
            return nil
        }
        let errorsBefore = reader.errors.count
        reader.unknownKeys(of: table, known: keys, section: "openbao")
        func text(_ key: String, required: Bool = false) -> String? {
            guard let value = table[key] else {
                if required { reader.fail("openbao.\(key)", "missing (required)", line: reader.headerLine(containing: "openbao")) }
                return nil
            }
            guard let string = value.string, !string.isEmpty, !string.contains(where: { $0.isNewline || $0 == "\0" }) else {
                reader.fail("openbao.\(key)", "must be a non-empty string on one line", lineKey: key)
                return nil
            }
            return string
        }
        func absolutePath(_ key: String) -> String? {
            guard let path = text(key) else { return nil }
            guard path.hasPrefix("/") else {
                reader.fail("openbao.\(key)", "must be an absolute path", lineKey: key)
                return nil
            }
            return path
        }
        func name(_ key: String, check: (String) throws(OpenBaoNameError) -> Void) -> String? {
            guard let value = text(key, required: key == "path") else { return nil }
            do {
                try check(value)
                return value
            } catch {
                reader.fail("openbao.\(key)", error.description, lineKey: key)
                return nil
            }
        }

        var addresses: [URL] = []
        if let value = table["addresses"] {
            let raws = value.array.map { $0.map(\.string) } ?? [nil]
            if raws.isEmpty || raws.contains(where: { $0 == nil }) {
                reader.fail(
                    "openbao.addresses",
                    "must be an array of addresses such as [\"https://bao-1.example:8200\", \"https://bao-2.example:8200\"]",
                    lineKey: "addresses")
            }
            for raw in raws.compactMap({ $0 }) {
                do {
                    addresses.append(try OpenBaoNames.address(raw))
                } catch {
                    reader.fail("openbao.addresses", error.description, lineKey: "addresses")
                }
            }
        } else {
            reader.fail("openbao.addresses", "missing (required)", line: reader.headerLine(containing: "openbao"))
        }
        let mount = name("mount") { mount throws(OpenBaoNameError) in try OpenBaoNames.checkMount(mount, option: "mount") } ?? "secret"
        let path = name("path", check: OpenBaoNames.checkPath)

        var login = Login.environment
        let tokenFile = absolutePath("token_file")
        let roleID = text("approle_role_id")
        let secretIDFile = absolutePath("approle_secret_id_file")
        if let roleID, !TokenText.isValid(roleID) {
            reader.fail(
                "openbao.approle_role_id", "must be visible ASCII without spaces, as OpenBao's role IDs are", lineKey: "approle_role_id")
        }
        switch (tokenFile, roleID, secretIDFile) {
        case (let file?, nil, nil): login = .tokenFile(file)
        case (nil, let roleID?, let file?): login = .appRole(roleID: roleID, secretIDFile: file)
        case (nil, nil, nil): login = .environment
        case (_?, _, _):
            reader.fail(
                "openbao.token_file", "cannot be used with approle_role_id or approle_secret_id_file: Latchkey logs in one way",
                lineKey: "token_file")
        case (nil, _, _):
            reader.fail(
                "openbao.approle_role_id", "and approle_secret_id_file go together: the role ID and the file holding the secret ID",
                lineKey: roleID == nil ? "approle_secret_id_file" : "approle_role_id")
        }
        guard reader.errors.count == errorsBefore, let path else { return nil }
        return OpenBaoSettings(addresses: addresses, mount: mount, path: path, login: login)
    }
}
