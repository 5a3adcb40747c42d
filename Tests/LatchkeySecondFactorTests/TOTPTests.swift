import Foundation
import IdentityToolkitEmulator
import Testing

@Suite("The emulator's TOTP codes")
struct TOTPTests {
    /// RFC 6238 appendix B's SHA-1 secret, "12345678901234567890", in base32.
    static let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("codes match RFC 6238's SHA-1 test vectors")
    func rfcVectors() {
        let vectors: [(TimeInterval, String)] = [(59, "94287082"), (1_111_111_109, "07081804"), (2_000_000_000, "69279037")]
        for (seconds, code) in vectors {
            #expect(TOTP.code(secret: Self.rfcSecret, at: Date(timeIntervalSince1970: seconds), digits: 8) == code)
        }
    }

    /// The demo's clock came from a request once: a date before 1970 trapped converting the step
    /// count to an unsigned counter and took the demo down with its private directory.
    @Test(
        "a date no counter stands for gives no code and verifies nothing, instead of trapping",
        arguments: [-1, -1e18, .infinity, -.infinity, .nan, 1e300])
    func datesOutsideTheCounter(seconds: TimeInterval) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(TOTP.code(secret: Self.rfcSecret, at: date) == nil)
        #expect(!TOTP.verify("287082", secret: Self.rfcSecret, at: date))
    }

    @Test("a digit count the 32-bit code cannot hold gives no code", arguments: [0, 10, -3])
    func digitCounts(digits: Int) {
        #expect(TOTP.code(secret: Self.rfcSecret, at: Date(timeIntervalSince1970: 59), digits: digits) == nil)
    }
}
