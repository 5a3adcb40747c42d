import ArgumentParser
import Foundation
import LatchkeyDoctor
import LatchkeySupport

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check everything a sign-in depends on and say what to fix; exit 1 when anything is a problem.")

    @OptionGroup var options: KeystoreOptions

    func run() async throws {
        let findings = await Diagnosis(environment: ProcessInfo.processInfo.environment, backend: options.keystore).run()
        for finding in findings { Output.result(finding.description) }
        guard Diagnosis.isHealthy(findings) else { throw ExitCode(Failure.problemsFound) }
    }
}
