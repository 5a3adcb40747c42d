import Foundation

/// A private directory (mode 0700) for one test's files, removed by `remove()`.
struct Scratch {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "latchkey-launcher-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Creates `name` (with its directories, 0700) holding `text`, with `mode`; returns its path.
    @discardableResult
    func file(_ name: String, _ text: String = "", mode: mode_t = 0o600) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, mode)
        return file
    }

    /// Creates the directory `name` with `mode` (chmod, so the umask does not narrow it).
    @discardableResult
    func directory(_ name: String, mode: mode_t = 0o700) throws -> String {
        let directory = path + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, mode)
        return directory
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
