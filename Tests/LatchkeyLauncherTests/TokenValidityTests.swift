import Foundation
import LatchkeyEssentials
import LatchkeyVault
import Testing

@Suite("One validity rule for the vault's records and the launcher's token copies")
struct TokenValidityTests {
    @Test("a 60-second token asked for with --min-ttl 60 right after its refresh is valid: the margin is capped at half its life")
    func marginCappedAtHalfTheLifetime() {
        // 59 s left of 60: the old copy rule (59 > 60) refused it, and every call fell through to a
        // slower answer that then printed the same token.
        #expect(TokenValidity.isValid(issuedAt: 1_000, expiresAt: 1_060, now: 1_001, margin: 60))
        #expect(TokenValidity.isValid(issuedAt: 1_000, expiresAt: 1_060, now: 1_029, margin: 60))
        // Half its life gone: now it must be refreshed.
        #expect(!TokenValidity.isValid(issuedAt: 1_000, expiresAt: 1_060, now: 1_030, margin: 60))
        // A margin under half the lifetime is the margin.
        #expect(TokenValidity.isValid(issuedAt: 0, expiresAt: 3_600, now: 3_000, margin: 599))
        #expect(!TokenValidity.isValid(issuedAt: 0, expiresAt: 3_600, now: 3_000, margin: 600))
    }

    @Test("an expired token is never valid, whatever the margin, even a negative one")
    func expired() {
        #expect(!TokenValidity.isValid(issuedAt: 0, expiresAt: 100, now: 100, margin: 0))
        #expect(!TokenValidity.isValid(issuedAt: 0, expiresAt: 100, now: 200, margin: -1_000))
        #expect(!TokenValidity.isValid(issuedAt: 0, expiresAt: 100, now: 100, margin: .min))
    }

    @Test("a token stamped as issued after its expiry (a clock step) is valid until it expires, whatever the margin")
    func issuedAfterExpiry() {
        #expect(TokenValidity.isValid(issuedAt: 200, expiresAt: 100, now: 99, margin: 3_600))
        #expect(!TokenValidity.isValid(issuedAt: 200, expiresAt: 100, now: 100, margin: 3_600))
    }

    @Test("no combination of extreme times and margins traps, and the answers stay sensible")
    func extremes() {
        let values = [Int.min, Int.min + 1, -1, 0, 1, 60, Int.max - 1, Int.max]
        for issued in values {
            for expiry in values {
                for now in values {
                    for margin in values {
                        let valid = TokenValidity.isValid(issuedAt: issued, expiresAt: expiry, now: now, margin: margin)
                        if expiry <= now { #expect(!valid) }
                    }
                }
            }
        }
        #expect(TokenValidity.isValid(issuedAt: 0, expiresAt: .max, now: 1, margin: .max), "most of its life ahead")
        #expect(!TokenValidity.isValid(issuedAt: .min, expiresAt: .max, now: 0, margin: .max), "half of its life gone")
        #expect(TokenValidity.isValid(issuedAt: .max, expiresAt: .max, now: .min, margin: .max), "2^64 - 1 seconds left")
        #expect(!TokenValidity.isValid(issuedAt: .min, expiresAt: .max, now: .max, margin: .min))
    }

    @Test("AccountRecord.isValid is the same rule on the record's whole seconds")
    func recordUsesTheRule() {
        var record = AccountRecord(
            provider: "p", issuer: "https://issuer.example", subject: "s", displayName: nil, accessToken: Secret("t"),
            tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [],
            createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        #expect(record.isValid(at: Date(timeIntervalSince1970: 1e12), margin: 1e9), "a token without an expiry stays valid")
        for issued in [1_000, 1_010, 1_059] {
            for lifetime in [-10, 0, 1, 59, 60, 61, 3_600] {
                for elapsed in [0, 1, 29, 30, 31, 59, 60, 61] {
                    for margin in [0, 1, 30, 60, 120] {
                        record.updatedAt = Date(timeIntervalSince1970: TimeInterval(issued) + 0.25)
                        record.expiresAt = Date(timeIntervalSince1970: TimeInterval(issued + lifetime) + 0.75)
                        let now = issued + elapsed
                        #expect(
                            record.isValid(at: Date(timeIntervalSince1970: TimeInterval(now) + 0.5), margin: TimeInterval(margin))
                                == TokenValidity.isValid(issuedAt: issued, expiresAt: issued + lifetime, now: now, margin: margin))
                    }
                }
            }
        }
    }

    @Test("stored dates and margins no Int can hold are clamped, not trapped on")
    func absurdDates() {
        var record = AccountRecord(
            provider: "p", issuer: "https://issuer.example", subject: "s", displayName: nil, accessToken: Secret("t"),
            tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: Date(timeIntervalSince1970: 1e300), scopes: [],
            createdAt: Date(), updatedAt: Date())
        #expect(record.isValid(at: Date(), margin: 1e18))
        #expect(record.isValid(at: Date(), margin: .infinity), "half of an unbounded lifetime is still ahead")
        record.updatedAt = Date(timeIntervalSince1970: -1e300)
        #expect(!record.isValid(at: Date(), margin: .infinity), "more than half of it is gone")
        record.expiresAt = Date(timeIntervalSince1970: -1e300)
        #expect(!record.isValid(at: Date(), margin: -.infinity))
        #expect(!record.isValid(at: Date(), margin: .nan))
    }
}
