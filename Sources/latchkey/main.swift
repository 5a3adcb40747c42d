// `latchkey`: answers `latchkey token NAME` from the kernel keyring when it can (its token copy,
// else the vault opened with the cached key; `status --json` likewise; `mcp headers NAME` and
// `aws-credential NAME …` from their copies), or from the agent (`token`, `aws-credential`),
// and otherwise hands the whole command line to `latchkey-cli`, installed in
// ../libexec/latchkey/ or beside it.
//
// Two executables because the hot path must start in well under a millisecond: this one links
// only the standard library and FoundationEssentials (no OpenSSL: LatchkeyVault), while the full
// command line (Foundation with ICU, ncurses) costs milliseconds just to load. See
// docs/decisions/token-fast-path.md and docs/decisions/startup.md.
import CLatchkeySys
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyLauncher
import LatchkeyVault

#if canImport(Glibc)
    import Glibc
#endif

// Before any secret is read: no core dump, no ptrace attach. The core limit carries over the exec
// below; exec resets the other, so latchkey-cli hardens itself again.
_ = lk_harden_process()
// Run as docker-credential-latchkey (a link), it is `latchkey docker-credential`.
let arguments = LauncherName.commandLine(CommandLine.arguments)
if let asked = LauncherRequest(arguments) {
    let environment = { (name: String) in getenv(name).map { String(cString: $0) } }
    let agent = AgentSocket.endpoint(environment)
    // The answers from this machine follow config.toml's directory mappings; when those cannot be
    // known here, they are left to the agent (which reads config.toml) or the full command. With
    // LATCHKEY_AGENT set, only the agent answers.
    let directory = agent?.isExplicit == true ? nil : LauncherDirectory.current(environment)
    // What `asked` means in this directory, worked out once for every answer below.
    let mapped = directory?.applying(to: asked)
    if let directory, let mapped {
        let copied: Int32?
        switch mapped {
        case .token(let selector, let minimumLifetime, let narrowing):
            copied = TokenFastPath.run(
                selector: selector.description, narrowing: narrowing.map { ($0.resource, $0.scopes) }, minimumLifetime: minimumLifetime,
                from: directory.origin)
        case .awsCredential(let selector, let options, _):
            copied = TokenFastPath.runAWSCredential(selector: selector.description, options: options, from: directory.origin)
        case .mcpHeaders(let selector):
            // The full command's default lifetime: `mcp headers` takes no --min-ttl here.
            copied = TokenFastPath.run(selector: selector.description, minimumLifetime: 60, asMCPHeader: true, from: directory.origin)
        case .statusJSON:
            copied = nil
        }
        if let copied { exit(copied) }
    }
    if let agent, case .token(let selector, let minimumLifetime, let narrowing) = asked {
        switch AgentTokenAnswer.run(selector, narrowing: narrowing, minimumLifetime: minimumLifetime, endpoint: agent) {
        case .answered(let status): exit(status)
        case .fullCommand: break
        case .noAgent:
            if let directory, let mapped, let status = UnlockedVaultAnswer.run(mapped, in: directory) { exit(status) }
        }
    } else if let agent, case .awsCredential(let selector, let options, let minimumLifetime) = asked {
        // No vault answers this one: without an agent's answer, the full command does.
        if case .answered(let status) = AgentTokenAnswer.runAWSCredential(
            selector, options: options, minimumLifetime: minimumLifetime, endpoint: agent)
        {
            exit(status)
        }
    } else if let directory, let mapped, let status = UnlockedVaultAnswer.run(mapped, in: directory) {
        exit(status)
    }
}
var failure = Array(CommandLineLauncher.exec(arguments).utf8)
_ = write(STDERR_FILENO, &failure, failure.count)
exit(1)
