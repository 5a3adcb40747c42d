#if canImport(Glibc)
    import Glibc
#endif

/// The files the release policy (`forward`, `confirm`) is read from, config.toml and the provider
/// files, and the one fingerprint of them that the agent, the full command's token copies and
/// the launcher all compare, so that no door goes on answering by a policy its files no longer say.
///
/// A file's identity is its device, inode, size and modification and change times to the
/// nanosecond: a file replaced (rename, as some editors save) changes its inode, one rewritten in
/// place (`>`, most editors) its times. The times may come from the kernel's coarse clock, a few
/// milliseconds a tick, so whoever reads the files trusts an identity only once its file is
/// older than `settleTime` (as git treats a file changed within its index's second as "racily
/// clean"): a later write then cannot leave it unchanged. All of it is a handful of stat(2)
/// calls: the launcher checks config.toml and one provider file on its fast path.
public enum PolicyFiles {
    /// How old (in nanoseconds) a file's change time must be before its identity can stand for
    /// its contents: two ticks of the coarse clock file times are taken from (4 ms a tick here).
    public static let settleTime: Int64 = {
        var resolution = timespec()
        clock_getres(CLOCK_REALTIME_COARSE, &resolution)
        return 2 * (Int64(resolution.tv_sec) * 1_000_000_000 + Int64(resolution.tv_nsec))
    }()

    /// `$XDG_CONFIG_HOME/latchkey/config.toml`.
    public static func configFile(_ lookup: (String) -> String?) -> String {
        XDGDirectories.config(lookup) + "/config.toml"
    }

    /// The providers directories searched, most important first: `$LATCHKEY_PROVIDERS_DIR` alone
    /// when set (tests and scripts want exactly one place); otherwise
    /// `$XDG_CONFIG_HOME/latchkey/providers.d` then `/etc/latchkey/providers.d`.
    public static func providerDirectories(_ lookup: (String) -> String?) -> [String] {
        if let only = lookup("LATCHKEY_PROVIDERS_DIR"), !only.isEmpty { return [only] }
        return [XDGDirectories.config(lookup) + "/providers.d", "/etc/latchkey/providers.d"]
    }

    /// Written for a file that does not exist.
    public static let absent = "-"

    /// `path`'s identity (see the type), `absent` when there is no such file, `nil` when it
    /// cannot be looked at, or, with `settled`, when it changed too recently to be told apart
    /// from a write still to come.
    public static func identity(of path: String, settled: Bool = false) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT || errno == ENOTDIR ? absent : nil }
        if settled {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
            guard Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - changed >= settleTime else { return nil }
        }
        let fields = [
            UInt64(info.st_dev), UInt64(info.st_ino), UInt64(clamping: info.st_size), UInt64(clamping: info.st_mtim.tv_sec),
            UInt64(clamping: info.st_mtim.tv_nsec), UInt64(clamping: info.st_ctim.tv_sec), UInt64(clamping: info.st_ctim.tv_nsec),
        ]
        // Not `joined(separator:)`: unspecialised in the launcher's static binary, it looks its
        // element type up by name at run time: 7% of its `token` in a mapped directory (perf).
        var identity = String(fields[0], radix: 10)
        for field in fields.dropFirst() { identity += ":" + String(field, radix: 10) }
        return identity
    }

    /// The policy of provider `name`'s accounts as its files are: config.toml's identity, then
    /// `NAME.toml`'s in each providers directory up to the first that has it (the one read).
    /// `identity` is how one file is looked at: now, for the launcher; as a snapshot taken before
    /// the files were read, for those who read them. `nil` when a file's identity is unknown.
    public static func fingerprint(
        ofProvider name: String, configIdentity: String?, directories: [String], identity: (String) -> String?
    ) -> String? {
        guard var fingerprint = configIdentity else { return nil }
        for directory in directories {
            guard let file = identity(directory + "/" + name + ".toml") else { return nil }
            fingerprint += "|" + file
            if file != absent { break }
        }
        return fingerprint
    }

    /// `fingerprint(ofProvider:…)` as the files are now, for the launcher.
    public static func currentFingerprint(ofProvider name: String, _ lookup: (String) -> String?) -> String? {
        fingerprint(
            ofProvider: name, configIdentity: identity(of: configFile(lookup)), directories: providerDirectories(lookup),
            identity: { identity(of: $0) })
    }
}

/// Every policy file's identity at one moment, taken before the files are read: what the agent
/// compares to know it must read them again, and what the fingerprints a reader hands on (the
/// token copies') are made of, so a file changed while it was read is never taken for the one read.
public struct PolicySnapshot: Sendable {
    /// By path: config.toml, each providers directory and every `*.toml` file in them.
    private var identities: [String: String] = [:]
    /// The providers directories, most important first.
    public let directories: [String]
    /// `false` when a file could not be looked at or changed within `settleTime`: such a
    /// snapshot matches no other, so the agent reads the files again until they settle, and it
    /// gives no fingerprint.
    public private(set) var isSettled = true

    /// Looks at config.toml, each directory and the `*.toml` files in it.
    public init(configFile: String, directories: [String]) {
        self.directories = directories
        for path in [configFile] + directories { note(path) }
        for directory in directories {
            guard let stream = opendir(directory) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".toml") { note(directory + "/" + name) }
            }
        }
    }

    /// The snapshot for `lookup`'s environment.
    public init(_ lookup: (String) -> String?) {
        self.init(configFile: PolicyFiles.configFile(lookup), directories: PolicyFiles.providerDirectories(lookup))
    }

    private mutating func note(_ path: String) {
        guard let identity = PolicyFiles.identity(of: path, settled: true) else {
            isSettled = false
            return
        }
        identities[path] = identity
    }

    /// Provider `name`'s fingerprint with config.toml's identity as it was read
    /// (`configIdentity`), its provider file's as this snapshot saw it; `nil` when not settled.
    public func fingerprint(ofProvider name: String, configIdentity: String?) -> String? {
        guard isSettled else { return nil }
        return PolicyFiles.fingerprint(
            ofProvider: name, configIdentity: configIdentity, directories: directories,
            identity: { identities[$0] ?? PolicyFiles.absent })
    }

    /// Whether the files read after `self` was taken are still the ones `other` sees: both
    /// settled, every file the same.
    public func matches(_ other: PolicySnapshot) -> Bool {
        isSettled && other.isSettled && identities == other.identities && directories == other.directories
    }
}
