public import Foundation
public import LatchkeyVault
import Synchronization

/// The rule for a token a server refused (HTTP 401): the account is refreshed only when the
/// refused token is still the one it holds (a client with an old token gets the current one), and
/// at most once per `interval` per account, whichever door asks: a server refusing every token
/// could otherwise make a client rotate the account's refresh token with each message.
public final class ForcedRefresh: Sendable {
    /// How often a refused token may make the broker refresh one account.
    public static let interval: TimeInterval = 30

    /// Account → when a refused token last made the broker refresh it.
    private let last = Mutex<[AccountIdentity: Date]>([:])

    public init() {}

    /// `nil` when a refused token may make the broker refresh `account` now (and from now on
    /// that counts as its last such refresh), else the seconds until it may.
    public func wait(for account: AccountIdentity, now: Date) -> Int? {
        last.withLock { last in
            if let previous = last[account], now.timeIntervalSince(previous) < Self.interval {
                return max(1, Int((Self.interval - now.timeIntervalSince(previous)).rounded(.up)))
            }
            last[account] = now
            return nil
        }
    }
}
