import CLatchkeySys
import Foundation
import LatchkeyKeystore
import LatchkeyVault

/// Asks for the vault passphrase on the controlling terminal with echo off.
///
/// `/dev/tty` rather than stdin, so `latchkey token` inside `$(...)` or a pipe can still ask, and
/// the answer never passes through the command line or the environment.
struct TerminalPassphrasePrompt: PassphraseProvider {
    func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        guard let terminal = TerminalDevice.open() else {
            let how = "there is no terminal to ask for the passphrase; set LATCHKEY_PASSPHRASE_FILE to a 0600 file holding it"
            throw creating ? .noVault(how) : .locked(how)
        }
        defer { terminal.close() }
        if creating {
            terminal.write("Creating the encrypted vault \(path).\n")
            let first = terminal.readHidden(prompt: "New vault passphrase: ")
            guard let first, first.count >= 8 else { throw .locked("the passphrase must have at least 8 characters") }
            let second = terminal.readHidden(prompt: "Repeat the passphrase: ")
            guard second == first else { throw .locked("the two passphrases differ; nothing was created") }
            return Secret(first)
        }
        guard let answer = terminal.readHidden(prompt: "Passphrase for \(path): "), !answer.isEmpty else {
            throw .locked("no passphrase given")
        }
        return Secret(answer)
    }
}

/// The controlling terminal, opened directly.
struct TerminalDevice {
    let descriptor: Int32

    static func open() -> TerminalDevice? {
        let descriptor = Glibc.open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        return descriptor >= 0 ? TerminalDevice(descriptor: descriptor) : nil
    }

    func close() { _ = Glibc.close(descriptor) }

    func write(_ text: String) {
        _ = text.withCString { Glibc.write(descriptor, $0, strlen($0)) }
    }

    /// Reads one line with echo off; the terminal settings are restored whatever happens,
    /// Ctrl-C, a SIGTERM or the end of the process included (`lk_terminal_guard`).
    func readHidden(prompt: String) -> String? {
        write(prompt)
        var silent = termios()
        guard tcgetattr(descriptor, &silent) == 0, lk_terminal_guard(descriptor) == 0 else { return nil }
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(descriptor, TCSAFLUSH, &silent)
        defer {
            lk_terminal_unguard()
            write("\n")
        }
        return LineReader(descriptor: descriptor).readLine()
    }
}

/// Reads one line of any length from a descriptor, byte by byte (no buffering past the newline).
struct LineReader {
    let descriptor: Int32

    func readLine() -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): return String(decoding: bytes, as: UTF8.self)
            case 0x7F, 0x08: if !bytes.isEmpty { bytes.removeLast() }
            default: bytes.append(byte)
            }
        }
    }
}
