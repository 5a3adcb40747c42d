import Foundation
import LatchkeyAccounts
import LatchkeyEssentials
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeyVault
import Synchronization

/// Keeping every account fresh while the agent runs: a refresh ahead of expiry as the screen
/// does it (through the same single-flight `validRecord`, so the agent, the screen and any
/// command refresh a rotating refresh token once between them), and the hooks for what only a
/// person can fix.
extension Agent {
    /// What the agent has already said about each account, so a failure is said (and its hooks
    /// run) once per version of the record, not every round.
    struct Freshness: Sendable {
        /// Account → the record's `updatedAt` when its refresh last failed.
        var failed: [String: Date] = [:]
        /// Account and expiry already announced to `on_expiring` / `on_reauth_needed`.
        var announced: Set<String> = []
    }

    /// How long the agent sleeps at most between two looks at the accounts.
    static let checkInterval: Duration = .seconds(30)

    /// Refreshes what is due until cancelled, waking when the next token is due.
    func keepFresh() async {
        while !Task.isCancelled {
            let next = await refreshDueAccounts(now: Date())
            let wait = max(1, min(next.map { $0.timeIntervalSinceNow } ?? 30, 30))
            try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    /// One round: refreshes each account whose token is due, runs the hooks of those that cannot
    /// be, and returns when the next one will be due.
    func refreshDueAccounts(now: Date) async -> Date? {
        let settings = settings()
        guard let all = try? await records.records() else { return nil }
        let service = service(settings, workingDirectory: nil)
        var next: Date?
        for record in all {
            let key = "\(record.provider)|\(record.issuer)|\(record.subject)"
            let name = "\(record.provider):\(record.label)"
            guard let expiresAt = record.expiresAt else { continue }
            guard record.refreshToken != nil else {
                announceExpiry(of: record, expiresAt: expiresAt, now: now, key: key, settings: settings)
                continue
            }
            let due = Self.refreshDue(record)
            guard due <= now else {
                next = min(next ?? due, due)
                continue
            }
            if freshness.withLock({ $0.failed[key] }) == record.updatedAt { continue }
            do {
                let fresh = try await service.validRecord(of: record, minimumLifetime: TimeInterval(Self.refreshWindow))
                freshness.withLock { _ = $0.failed.removeValue(forKey: key) }
                let following = Self.refreshDue(fresh)
                next = min(next ?? following, following)
            } catch {
                freshness.withLock { $0.failed[key] = record.updatedAt }
                let reason = (error as? any LatchkeyError)?.description ?? String(describing: error)
                options.say("could not refresh \(TerminalText.sanitized(name, maxLength: 200)): \(reason)")
                settings.hooks.fire(
                    HookEvent(.refreshFailed, provider: record.provider, account: record.label, time: Date(), reason: reason))
                if AccountService.needsSignIn(error) { needsSignIn(record, because: error, hooks: settings.hooks) }
            }
        }
        return next
    }

    /// When `record` should be refreshed: as soon as `validRecord` with the refresh window would
    /// refresh it (the window, capped at half the token's lifetime, before expiry).
    static func refreshDue(_ record: AccountRecord) -> Date {
        guard let expiresAt = record.expiresAt else { return .distantFuture }
        let lifetime = max(0, expiresAt.timeIntervalSince(record.updatedAt))
        return expiresAt.addingTimeInterval(-min(TimeInterval(refreshWindow), lifetime / 2))
    }

    /// `on_expiring` for an account without a refresh token whose token ends within
    /// `expiring_minutes`; once it has ended, it needs a sign-in.
    private func announceExpiry(of record: AccountRecord, expiresAt: Date, now: Date, key: String, settings: BrokerSettings) {
        let left = expiresAt.timeIntervalSince(now)
        guard left < TimeInterval(settings.configuration.hooks.expiringMinutes * 60) else { return }
        let episode = key + "|\(expiresAt.timeIntervalSince1970)|" + (left > 0 ? "expiring" : "expired")
        guard freshness.withLock({ $0.announced.insert(episode).inserted }) else { return }
        if left > 0 {
            options.say(
                "\(TerminalText.sanitized("\(record.provider):\(record.label)", maxLength: 200)) has no refresh token and expires in \(Int(left) / 60 + 1) min"
            )
            settings.hooks.fire(
                HookEvent(
                    .expiring, provider: record.provider, account: record.label, time: Date(), reason: "no refresh token",
                    expiresAt: expiresAt))
        } else {
            needsSignIn(
                record, because: RefreshError.noRefreshToken(account: record.label, provider: record.provider), hooks: settings.hooks)
        }
    }

    /// Says that only a sign-in can give `record` a token again, and runs `on_reauth_needed`
    /// (once per failure: the record's `updatedAt` and the reason name it).
    func needsSignIn(_ record: AccountRecord, because error: any Error, hooks: Hooks) {
        let reason = (error as? any LatchkeyError)?.description ?? String(describing: error)
        let episode = "\(record.provider)|\(record.issuer)|\(record.subject)|\(record.updatedAt.timeIntervalSince1970)|sign-in"
        guard freshness.withLock({ $0.announced.insert(episode).inserted }) else { return }
        options.say("\(TerminalText.sanitized("\(record.provider):\(record.label)", maxLength: 200)) needs a sign-in: \(reason)")
        hooks.fire(HookEvent(.reauthNeeded, provider: record.provider, account: record.label, time: Date(), reason: reason))
    }
}
