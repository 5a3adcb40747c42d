import CLatchkeySys
import Foundation
import LatchkeyEssentials
import LatchkeySupport
import LatchkeyVault

/// Records the `openbao` keystore could not write back after a provider answered (a rotated
/// refresh token among them), kept on this machine until OpenBao takes them.
///
/// A 0600 file in the data directory, written as the vault is (`AtomicFile`) and read with the
/// vault's checks (the owner's, a regular file, no access for others). It is the only place a
/// refresh token of this keystore reaches the disk, and only while a write back is pending.
public struct OpenBaoJournal: Sendable {
    /// Where the journal is kept.
    public let path: String
    /// The engine and path the records belong to: a journal for another is not written elsewhere.
    let mount: String
    let secretPath: String

    init(path: String, mount: String, path secretPath: String) {
        self.path = path
        self.mount = mount
        self.secretPath = secretPath
    }

    /// One account's new state: its record, or `nil` when it was removed.
    struct Change: Codable, Sendable, Equatable {
        var name: String
        var record: AccountRecord?
    }

    private struct Contents: Codable {
        var mount: String
        var path: String
        var changes: [Change]
    }

    /// Whether records wait to be written (`latchkey doctor` says so).
    public var isPending: Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The changes waiting, `nil` when there are none.
    func load() throws(KeystoreError) -> [Change]? {
        let bytes: [UInt8]
        switch VaultFile.read(path) {
        case .success(let read?): bytes = read
        case .success(nil): return nil
        case .failure(let problem): throw KeystoreError(problem, path: path)
        }
        guard let contents = try? OpenBaoKeystore.decoder.decode(Contents.self, from: Data(bytes)) else {
            throw .damaged(path: path, reason: "it is not a journal of this Latchkey's")
        }
        guard contents.mount == mount, contents.path == secretPath else {
            throw .io(
                path: path,
                reason:
                    "it holds records for OpenBao's \(contents.mount)/\(contents.path), not the configured \(mount)/\(secretPath); set [openbao] back to write them there"
            )
        }
        return contents.changes
    }

    func save(_ changes: [Change]) throws(KeystoreError) {
        try KeystoreError.file { () throws(FileError) in try AtomicFile.ensureDirectory(VaultFile.directory(of: path), of: path) }
        guard let bytes = try? OpenBaoKeystore.encoder.encode(Contents(mount: mount, path: secretPath, changes: changes)) else {
            throw .io(path: path, reason: "the records cannot be written as JSON")
        }
        try KeystoreError.file { () throws(FileError) in try AtomicFile.replace(path, with: Array(bytes)) }
    }

    func remove() throws(KeystoreError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .io(path: path, reason: String(cString: strerror(errno))) }
    }
}
