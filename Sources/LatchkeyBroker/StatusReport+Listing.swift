public import LatchkeyBrokerWire
import LatchkeyEssentials
public import LatchkeyProviders
import LatchkeyVault

extension StatusReport {
    /// What `latchkey status` prints: each configured provider with its accounts, then the
    /// accounts of providers no longer configured. The agent sends these lines to a client that
    /// has no provider files of its own (a forwarded host).
    public func listing(providers: [Provider]) -> [String] {
        var lines: [String] = []
        for provider in providers {
            let here = accounts.filter { $0.provider == provider.name }
            lines.append("\(provider.name) — \(TerminalText.sanitized(provider.displayName))\(here.isEmpty ? " (signed out)" : "")")
            lines += here.map { "  " + $0.summary }
        }
        for account in accounts where !providers.contains(where: { $0.name == account.provider }) {
            lines.append("\(account.provider) — no longer configured\n  " + account.summary)
        }
        return lines
    }
}
