/// Where `latchkey-cli` finds the shared libraries it opens at run time (libcurl, libsecret): by
/// absolute path in the system's library directories only, each accepted by `TrustedProgram`'s
/// rule (`.sharedLibrary`) before it is handed to `dlopen`.
///
/// `dlopen` of a bare name searches the program's run path, `LD_LIBRARY_PATH` and the loader's
/// cache: a run path of `$ORIGIN` (SwiftPM's default, removed from the build) would load a
/// `libcurl.so.4` anyone dropped beside the program. `LD_LIBRARY_PATH` is the person's own choice,
/// and no longer reaches these libraries either: they come from the directories the system's
/// package manager fills, owned by root.
public enum SystemLibrary {
    /// The Debian multiarch triplet of this build's platform (`/usr/lib/<triplet>`): where Debian
    /// and Ubuntu keep libraries.
    #if arch(x86_64)
        static let multiarch: String? = "x86_64-linux-gnu"
    #elseif arch(arm64)
        static let multiarch: String? = "aarch64-linux-gnu"
    #else
        static let multiarch: String? = nil
    #endif

    /// The directories searched, in order: the multiarch ones (Debian, Ubuntu), then `lib64`
    /// (Fedora, RHEL, SUSE keep 64-bit libraries there and 32-bit ones in `lib`), then `lib`
    /// (Arch, Alpine), each under `/usr` before `/`. Not `/usr/local/lib`, nor what
    /// `/etc/ld.so.conf` adds: a library there is not one the system installed.
    public static let directories: [String] =
        (multiarch.map { ["/usr/lib/\($0)", "/lib/\($0)"] } ?? []) + ["/usr/lib64", "/lib64", "/usr/lib", "/lib"]

    /// Why no library was found.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// None of the names is in any of the directories.
        case missing(names: [String], directories: [String])
        /// One was found but refused; the refusal names the entry at fault.
        case refused(TrustedProgram.Refusal)

        public var description: String {
            switch self {
            case .missing(let names, let directories):
                let searched = directories.joined(separator: ", ")
                guard names.count > 1 else { return "\(names.first ?? "the library") is in none of \(searched)" }
                return "neither \(names.joined(separator: " nor ")) is in any of \(searched)"
            case .refused(let refusal):
                return "\(refusal), so it is not loaded: another user could have put code of their own there"
            }
        }
    }

    /// The real path of the first of `names` found in `directories` (each name in every directory
    /// before the next name: the first name is the preferred library), checked by
    /// `TrustedProgram`'s rule. A name that does not exist in a directory is passed over; one that
    /// exists but is refused ends the search, as the launcher's search for `latchkey-cli` does.
    public static func locate(_ names: [String], in directories: [String] = directories) throws(Failure) -> String {
        for name in names {
            for directory in directories {
                do {
                    return try TrustedProgram.open(directory + "/" + name, as: .sharedLibrary).path
                } catch .missing {
                    continue
                } catch {
                    throw .refused(error)
                }
            }
        }
        throw .missing(names: names, directories: directories)
    }
}
