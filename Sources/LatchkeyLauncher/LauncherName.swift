/// The names the launcher answers to besides `latchkey`: a client that runs a helper by a fixed
/// name (`docker-credential-NAME`) finds a link to the launcher under that name, and the launcher
/// runs the matching command, as if called as `latchkey COMMAND ARGUMENTS…`.
public enum LauncherName {
    /// The Docker credential-helper protocol's name for Latchkey's helper (`credHelpers` value
    /// `latchkey`).
    public static let dockerCredentialHelper = "docker-credential-latchkey"

    /// `arguments` as the command line of `latchkey` itself; unchanged under any other name.
    public static func commandLine(_ arguments: [String]) -> [String] {
        guard let first = arguments.first else { return arguments }
        let name = first.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? first
        guard name == dockerCredentialHelper else { return arguments }
        return [first, "docker-credential"] + arguments.dropFirst()
    }
}
