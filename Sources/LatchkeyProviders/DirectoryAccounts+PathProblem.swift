import CLatchkeySys
public import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

extension DirectoryAccounts.Mapping {
    /// Why this `[directories."PATH"]` does not apply anywhere today, or `nil` when it can. The
    /// path is compared with getcwd(3), which never holds `.` or `..` and names only existing
    /// directories; such a mapping is kept (a directory may be created later) but `status` says so.
    public var pathProblem: String? {
        var info = stat()
        if stat(path, &info) == 0 {
            return info.st_mode & S_IFMT == S_IFDIR ? nil : "is not a directory, so no working directory is in it"
        }
        if path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) {
            return
                "goes through . or .. and a directory that does not exist, so no working directory can ever match it; write it without them"
        }
        return "does not exist; it applies once it is created"
    }
}
