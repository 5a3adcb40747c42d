import CLatchkeySys
import Foundation
import IdentityToolkitEmulator

// It holds test users' passwords and signing keys: no core dump, no ptrace attach.
_ = lk_harden_process()

/// latchkey-emulator: serves the Identity Toolkit emulator on a loopback port.
///
///     latchkey-emulator [--port N] [--project ID] [--seed FILE.json] [--code-lifetime S]
///                       [--max-attempts N] [--sms-quota N] [--require-app-verification]
///                       [--user EMAIL:PASSWORD[:+PHONE,...]]...
///
/// Prints `READY http://127.0.0.1:PORT` on stdout once listening; codes sent are logged on stderr
/// and listed at `GET /emulator/v1/projects/PROJECT/verificationCodes`.
let usage = """
    usage: latchkey-emulator [--port N] [--project ID] [--seed FILE.json] [--code-lifetime SECONDS]
                             [--max-attempts N] [--sms-quota N] [--require-app-verification]
                             [--user EMAIL:PASSWORD[:+PHONE,+PHONE...]]...
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latchkey-emulator: \(message)\n\(usage)\n".utf8))
    exit(64)
}

/// The options, parsed from the command line.
struct Options {
    var configuration = EmulatorConfiguration()
    var port = 0

    init(_ commandLine: [String]) {
        var arguments = commandLine
        var extraUsers: [EmulatorUser] = []
        func value(_ flag: String) -> String {
            guard !arguments.isEmpty else { fail("\(flag) needs a value") }
            return arguments.removeFirst()
        }
        func number<Number: LosslessStringConvertible>(_ flag: String) -> Number {
            guard let parsed = Number(value(flag)) else { fail("\(flag) needs a number") }
            return parsed
        }
        while !arguments.isEmpty {
            let flag = arguments.removeFirst()
            switch flag {
            case "--port": port = number(flag)
            case "--project": configuration.projectID = value(flag)
            case "--seed":
                let path = value(flag)
                guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
                do {
                    configuration = try JSONDecoder().decode(EmulatorConfiguration.self, from: data)
                } catch {
                    fail("\(path) is not a valid seed file: \(error)")
                }
            case "--code-lifetime": configuration.codeLifetime = number(flag)
            case "--max-attempts": configuration.maxCodeAttempts = number(flag)
            case "--sms-quota": configuration.smsQuota = number(flag)
            case "--require-app-verification": configuration.requireAppVerification = true
            case "--user":
                let parts = value(flag).split(separator: ":", maxSplits: 2).map(String.init)
                guard parts.count >= 2 else { fail("--user needs EMAIL:PASSWORD[:PHONES]") }
                let phones = parts.count > 2 ? parts[2].split(separator: ",").map(String.init) : []
                extraUsers.append(
                    EmulatorUser(
                        localId: "user\(extraUsers.count + 1)", email: parts[0], password: parts[1],
                        mfaInfo: phones.enumerated().map { .init(mfaEnrollmentId: "phone\($0.offset + 1)", phoneInfo: $0.element) }))
            case "-h", "--help":
                print(usage)
                exit(0)
            default: fail("unknown argument \(flag)")
            }
        }
        configuration.users += extraUsers
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let emulator = try await IdentityToolkitEmulator.start(
    configuration: options.configuration, port: options.port,
    log: { line in FileHandle.standardError.write(Data("latchkey-emulator: \(line)\n".utf8)) }, listsCodesOverHTTP: true)
FileHandle.standardOutput.write(Data("READY http://127.0.0.1:\(emulator.port)\n".utf8))
// Serve until killed.
while true { try await Task.sleep(for: .seconds(3600)) }
