import LatchkeyEssentials

/// Which account a bare `PROVIDER` means in and below a directory (`[directories."PATH"]` in
/// config.toml), like git's `includeIf "gitdir:"`: the work account in `~/work/acme`, the personal
/// one elsewhere. Here, not in the configuration reader, because the launcher applies the same
/// rule from the copy the full command leaves in the kernel keyring.
public struct DirectoryAccounts: Sendable, Equatable {
    public struct Mapping: Sendable, Equatable {
        /// The directory as config.toml writes it (`~/work/acme`), for messages.
        public var written: String
        /// Expanded, with symlinks resolved: what the working directory is compared with.
        public var path: String
        /// Provider name → account (its display name or subject, as in `PROVIDER:ACCOUNT`).
        public var accounts: [String: String]
        /// The line of the table in config.toml, for warnings.
        public var line: Int?

        public init(written: String, path: String, accounts: [String: String], line: Int? = nil) {
            self.written = written
            self.path = path
            self.accounts = accounts
            self.line = line
        }
    }

    public var mappings: [Mapping]

    public init(_ mappings: [Mapping] = []) {
        self.mappings = mappings
    }

    /// The mapping that names an account of `provider` for `directory` (a physical path, as
    /// getcwd(3) gives it): the one with the longest path that is `directory` or one of its
    /// parents. `/w/acme` applies in `/w/acme/x`, not in `/w/acme2`.
    public func mapping(for provider: String, in directory: String) -> Mapping? {
        mappings.filter { $0.accounts[provider] != nil && Self.contains($0.path, directory) }.max {
            $0.path.utf8.count < $1.path.utf8.count
        }
    }

    /// `selector` with the account `directory` maps its provider to, when it names no account
    /// itself; an explicit `PROVIDER:ACCOUNT` always wins.
    public func applying(to selector: AccountSelector, in directory: String) -> AccountSelector {
        guard selector.account == nil, let mapping = mapping(for: selector.provider, in: directory) else { return selector }
        return AccountSelector(provider: selector.provider, account: mapping.accounts[selector.provider])
    }

    /// Whether `path` is `directory` or one of its parents, compared by whole path components.
    static func contains(_ path: String, _ directory: String) -> Bool {
        contains(ArraySlice(path.utf8), ArraySlice(directory.utf8))
    }

    private static func contains(_ path: ArraySlice<UInt8>, _ directory: ArraySlice<UInt8>) -> Bool {
        let slash = UInt8(ascii: "/")
        if path.count == 1, path.first == slash { return directory.first == slash }
        guard directory.starts(with: path) else { return false }
        let rest = directory.dropFirst(path.count)
        return rest.isEmpty || rest.first == slash
    }

    // MARK: - The launcher's copy

    /// The mappings in lines the launcher reads without a TOML parser: `PATH\tPROVIDER\tACCOUNT`.
    /// A field holding a tab or a newline cannot be written this way, so such a mapping is left
    /// out, and the launcher then answers nothing a mapping could change (see `isComplete`).
    public var launcherCopy: (text: String, isComplete: Bool) {
        var lines: [String] = []
        var complete = true
        for mapping in mappings {
            for (provider, account) in mapping.accounts.sorted(by: { $0.key < $1.key }) {
                let fields = [mapping.path, provider, account]
                guard fields.allSatisfy({ !$0.contains("\t") && !$0.contains("\n") }) else {
                    complete = false
                    continue
                }
                lines.append(fields.joined(separator: "\t"))
            }
        }
        return (lines.joined(separator: "\n"), complete)
    }

    /// The account `launcherCopy`'s `lines` map `provider` to in `directory`: what
    /// `applying(to:in:)` answers for a bare provider (`DirectoryAccountsTests` holds them to the
    /// same answers), read from the bytes as they are. The launcher asks this on every `token`
    /// where config.toml maps anything, and building the `Mapping`s first made it instantiate
    /// generic types at run time that cost it more than the rest of its answer.
    public static func account(for provider: String, in directory: String, launcherCopy lines: [UInt8]) -> String? {
        let newline = UInt8(ascii: "\n")
        let tab = UInt8(ascii: "\t")
        let wanted = ArraySlice(provider.utf8)
        let here = ArraySlice(directory.utf8)
        var best: (pathLength: Int, account: Range<Int>)?
        var start = 0
        while start < lines.count {
            let end = lines[start...].firstIndex(of: newline) ?? lines.count
            defer { start = end + 1 }
            guard let first = lines[start..<end].firstIndex(of: tab),
                let second = lines[(first + 1)..<end].firstIndex(of: tab),
                !lines[(second + 1)..<end].contains(tab),
                lines[(first + 1)..<second].elementsEqual(wanted),
                contains(lines[start..<first], here), first - start > best?.pathLength ?? -1
            else { continue }
            best = (first - start, (second + 1)..<end)
        }
        return best.map { String(decoding: lines[$0.account], as: UTF8.self) }
    }

    /// The mappings from `launcherCopy`'s text.
    ///
    /// On the launcher's every `token`: lines of one path are taken to be adjacent, as
    /// `launcherCopy` writes them, so no table keyed by path is built (a split path would only
    /// make two mappings of one directory, which `mapping(for:in:)` reads the same).
    public init(launcherCopy text: String) {
        var mappings: [Mapping] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(fields[0])
            if mappings.last?.path == path {
                mappings[mappings.count - 1].accounts[String(fields[1])] = String(fields[2])
            } else {
                mappings.append(Mapping(written: path, path: path, accounts: [String(fields[1]): String(fields[2])]))
            }
        }
        self.init(mappings)
    }
}

/// config.toml's mappings as the launcher finds them: a key in the token copies' keyring (so
/// `lock` drops it with the copies) holding config.toml's identity and `launcherCopy`'s lines,
/// written by the full command. When config.toml changed since, or the key is missing, the launcher
/// answers nothing, and the full command (which reads config.toml itself) answers and writes a new
/// copy: the launcher never applies mappings other than the file's.
public enum DirectoryAccountsCopy {
    public static func keyDescription(vaultPath: String) -> String { "latchkey:directories:" + vaultPath }

    /// The mappings in force, for the launcher, as `launcherCopy`'s lines: none when config.toml
    /// does not exist, the copy's when it was made from config.toml as it is now, `nil` when that
    /// cannot be known.
    public static func current(vaultPath: String, configFile: String) -> [UInt8]? {
        guard let identity = identity(ofConfigFile: configFile) else { return nil }
        guard let identity else { return [] }
        guard let payload = KernelKeyring.read(description: keyDescription(vaultPath: vaultPath)),
            payload.starts(with: identity.utf8), payload.count > identity.utf8.count,
            payload[identity.utf8.count] == UInt8(ascii: "\n")
        else { return nil }
        return Array(payload[(identity.utf8.count + 1)...])
    }

    /// The key's payload for `accounts` read from config.toml with `identity`; `nil` when the copy
    /// would leave a mapping out (the launcher then never answers a command a mapping changes).
    public static func payload(_ accounts: DirectoryAccounts, identity: String) -> [UInt8]? {
        let copy = accounts.launcherCopy
        guard copy.isComplete else { return nil }
        return Array((identity + "\n" + copy.text).utf8)
    }

    /// config.toml's identity (`PolicyFiles.identity`): `.some(nil)` when it does not exist,
    /// `nil` when it cannot be looked at.
    private static func identity(ofConfigFile path: String) -> String?? {
        guard let identity = PolicyFiles.identity(of: path) else { return nil }
        return identity == PolicyFiles.absent ? .some(nil) : .some(identity)
    }
}
