import Testing

@testable import LatchkeyBroker

/// Which local peers the agent takes for someone forwarding its socket over SSH.
@Suite struct RequesterTests {
    @Test("ssh, sshd and OpenSSH 9.8's sshd-session count, by executable or, when it is hidden, by name")
    func sshPrograms() {
        #expect(Requester.isSSH(executable: nil, name: "sshd-session\n"), "OpenSSH 9.8 and later")
        #expect(Requester.isSSH(executable: nil, name: "sshd\n"))
        #expect(Requester.isSSH(executable: nil, name: "ssh\n"))
        #expect(Requester.isSSH(executable: "/usr/sbin/sshd-session", name: "sshd-session"))
        #expect(Requester.isSSH(executable: "/usr/lib/openssh/sshd-session (deleted)", name: "x"), "replaced by an upgrade")
        #expect(Requester.isSSH(executable: "/usr/bin/ssh", name: "renamed"), "the executable, whatever the process calls itself")
        #expect(Requester.isSSH(executable: "/usr/bin/python3.11", name: "sshd-session"), "a claim to be ssh only gets less")
    }

    @Test("other programs, and names that only contain ssh, do not")
    func others() {
        #expect(!Requester.isSSH(executable: "/usr/bin/bash", name: "bash\n"))
        #expect(!Requester.isSSH(executable: nil, name: "ssh-agent\n"))
        #expect(!Requester.isSSH(executable: "/usr/bin/sshfs", name: "sshfs"))
        #expect(!Requester.isSSH(executable: nil, name: nil))
    }
}
