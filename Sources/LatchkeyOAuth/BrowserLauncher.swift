public import Foundation
import LatchkeySupport

/// Opens a URL in the system browser: `$BROWSER`, else `xdg-open`. Never an embedded view
/// (RFC 8252 §8.12): the password is typed where Latchkey cannot read it.
public struct BrowserLauncher: Sendable {
    let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    /// The commands to try, in order. `$BROWSER` may list several separated by `:`, and a `%s`
    /// in one marks where the URL goes (the convention of sensible-browser and xdg-utils).
    var candidates: [[String]] {
        var commands: [[String]] = []
        if let browser = environment["BROWSER"], !browser.isEmpty {
            commands += browser.split(separator: ":").map { $0.split(separator: " ").map(String.init) }.filter { !$0.isEmpty }
        }
        commands.append(["xdg-open"])
        return commands
    }

    /// The executable the first launchable candidate resolves to, without starting anything
    /// (`latchkey doctor`); `nil` when none is found.
    public var firstAvailable: String? { candidates.lazy.compactMap { resolve($0[0]) }.first }

    /// Starts the first browser that can be started, without waiting for it; throws when none can.
    public func open(_ url: URL) throws(BrowserLaunchError) {
        var failures: [String] = []
        for command in candidates {
            guard let executable = resolve(command[0]) else {
                failures.append("\(command[0]): not found")
                continue
            }
            var arguments = Array(command.dropFirst())
            if let index = arguments.firstIndex(of: "%s") {
                arguments[index] = url.absoluteString
            } else {
                arguments.append(url.absoluteString)
            }
            do {
                try ChildProcess.launch(path: executable, arguments: arguments, environment: environment)
                return
            } catch {
                failures.append("\(command[0]): \(error.description)")
            }
        }
        throw .noBrowser(failures.joined(separator: "; "))
    }

    private func resolve(_ name: String) -> String? { ExecutableSearch.find(name, environment: environment) }
}

public enum BrowserLaunchError: Error, CustomStringConvertible {
    case noBrowser(String)

    public var description: String {
        switch self {
        case .noBrowser(let reasons): return "no browser could be started (\(reasons))"
        }
    }
}
