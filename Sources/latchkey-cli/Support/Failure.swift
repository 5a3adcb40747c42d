import ArgumentParser
import Foundation
import LatchkeyBrokerWire
import LatchkeyEssentials
import LatchkeyVault

/// The one place where failures become exit statuses (sysexits.h values, listed in latchkey(1)).
enum Failure {
    /// EX_USAGE: an unknown command, option or a request in the wrong format.
    static let usage: Int32 = 64

    static func exitCode(for category: FailureCategory) -> Int32 { category.exitStatus }

    /// `latchkey doctor` found at least one problem (warnings alone exit 0).
    static let problemsFound: Int32 = 1

    /// A command `latchkey exec` could not start, numbered as shells number it: 127 when it was
    /// not found, 126 when it was found but could not be run.
    static func exitCode(forExecError error: Int32) -> Int32 {
        error == ENOENT || error == ENOTDIR ? 127 : 126
    }

    /// What a failure reported beside a success (a revocation, a registration's deletion) says.
    static func describe(_ error: any Error) -> String {
        (error as? any LatchkeyError)?.description ?? "\(error)"
    }

    /// Runs a command body; a failure is printed on stderr as `latchkey: message` and becomes the exit status.
    static func reporting(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let (status, message) = outcome(of: error)
            Output.error(message)
            throw ExitCode(status)
        }
    }

    /// The exit status a failure becomes and what it says, for `reporting` and for commands that
    /// report failures in a form of their own (`gcp-credential`).
    static func outcome(of error: any Error) -> (status: Int32, message: String) {
        switch error {
        case let error as any LatchkeyError: return (exitCode(for: error.category), error.description)
        case let error as ExitCode: return (error.rawValue, "failed (exit status \(error.rawValue))")
        case is CancellationError: return (69, "cancelled")
        default: return (1, "unexpected error: \(TerminalText.sanitized(String(describing: error), maxLength: 500))")
        }
    }
}

/// stdout carries only what a command promises (a token, JSON, a listing); everything for people
/// goes to stderr.
///
/// Text for a terminal is sanitized here, whatever composed it: names, keys and file names from
/// provider files, claims and errors from servers, preset names. A caller never has to remember
/// to; only a token (checked to be visible ASCII when it was received), JSON (whose encoder
/// escapes every control character) and the QR code Latchkey draws itself are written as they are.
enum Output {
    /// A line or a listing on stdout.
    static func result(_ text: String) {
        write(TerminalText.sanitizedLines(text) + "\n", to: .standardOutput)
    }

    static func info(_ text: String) {
        write(TerminalText.sanitizedLines(text) + "\n", to: .standardError)
    }

    static func error(_ text: String) {
        info("latchkey: " + text)
    }

    static func json(_ value: some Encodable) throws {
        write(try ReportJSON.text(of: value) + "\n", to: .standardOutput)
    }

    /// A token on stdout, exactly as issued.
    static func token(_ token: Secret) {
        write(token.exposedValue + "\n", to: .standardOutput)
    }

    /// Lines Latchkey drew itself with its own escape sequences (the QR code's colours).
    static func drawing(_ lines: [String]) {
        write(lines.joined(separator: "\n") + "\n", to: .standardError)
    }

    private static func write(_ text: String, to handle: FileHandle) {
        handle.write(Data(text.utf8))
    }
}
