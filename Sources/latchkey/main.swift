// `latchkey`: answers `latchkey token NAME` from the kernel keyring when it can (its token copy,
// else the vault opened with the cached key; `status --json` likewise), and otherwise hands the
// whole command line to `latchkey-cli`, installed in ../libexec/latchkey/ or beside it.
//
// Two executables because the hot path must start in well under a millisecond: this one links
// only the standard library, FoundationEssentials and Crypto (statically), while the full
// command line (Foundation with ICU, SwiftNIO, ncurses) costs milliseconds just to load. See
// DECISIONS.md.
import CLatchkeySys
import LatchkeyEssentials
import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

// Before any secret is read: no core dump, no ptrace attach. The core limit carries over the exec
// below; exec resets the other, so latchkey-cli hardens itself again.
_ = lk_harden_process()
// Run as docker-credential-latchkey (a link), it is `latchkey docker-credential`.
let arguments = LauncherName.commandLine(CommandLine.arguments)
// The answers below follow config.toml's directory mappings; when those cannot be known here,
// only the full command answers.
if let asked = LauncherRequest(arguments), let directory = LauncherDirectory.current({ getenv($0).map { String(cString: $0) } }) {
    let request = directory.applying(to: asked)
    if case .token(let selector, let minimumLifetime) = request,
        let status = TokenFastPath.run(selector: selector.description, minimumLifetime: minimumLifetime)
    {
        exit(status)
    }
    if let status = UnlockedVaultAnswer.run(request, in: directory) { exit(status) }
}
var failure = Array(CommandLineLauncher.exec(arguments).utf8)
_ = write(STDERR_FILENO, &failure, failure.count)
exit(1)
