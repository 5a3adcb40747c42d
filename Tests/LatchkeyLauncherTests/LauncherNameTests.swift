import LatchkeyEssentials
import LatchkeyLauncher
import Testing

@Suite("The launcher run under a helper's name runs that helper's command")
struct LauncherNameTests {
    @Test("docker-credential-latchkey ACTION is latchkey docker-credential ACTION, from any directory")
    func dockerCredentialHelper() {
        #expect(
            LauncherName.commandLine(["docker-credential-latchkey", "get"]) == ["docker-credential-latchkey", "docker-credential", "get"])
        #expect(
            LauncherName.commandLine(["/usr/local/bin/docker-credential-latchkey", "list"])
                == ["/usr/local/bin/docker-credential-latchkey", "docker-credential", "list"])
        #expect(LauncherName.commandLine(["docker-credential-latchkey"]) == ["docker-credential-latchkey", "docker-credential"])
    }

    @Test("under its own name, or any other, the command line is left as it is")
    func otherNames() {
        for arguments in [
            ["latchkey", "token", "a"], ["/opt/docker-credential-latchkey/latchkey", "get"], ["docker-credential-latchkey-old", "get"],
            [],
        ] {
            #expect(LauncherName.commandLine(arguments) == arguments)
        }
    }
}
