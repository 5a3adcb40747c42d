import Foundation
import Testing

@testable import LatchkeySupport

@Suite("RFC 3339 timestamps from servers read without ICU")
struct RFC3339Tests {
    /// 2017-01-15T01:30:15Z.
    static let base = Date(timeIntervalSince1970: 1_484_443_815)

    @Test(
        "a fraction of any length is read to the nanosecond (ICU died of SIGFPE from 35 digits)",
        arguments: [1, 3, 9, 34, 35, 40, 400])
    func longFraction(digits: Int) throws {
        let fraction = String(repeating: "7", count: digits)
        let date = try #require(RFC3339.date(from: "2017-01-15T01:30:15.\(fraction)Z"))
        let kept = "0." + String(fraction.prefix(9))
        let expected = try #require(Double(kept))
        #expect(abs(date.timeIntervalSince(Self.base) - expected) < 1e-6)
    }

    @Test(
        "ordinary timestamps read as ISO8601DateFormatter read them",
        arguments: [
            "2024-05-01T12:34:56.789Z", "2017-01-15T01:30:15.01Z", "2024-05-01T12:34:56Z", "2024-02-29T00:00:00+02:00",
            "1969-12-31T23:59:59-05:30", "2000-03-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59.5Z",
        ])
    func sameAsFoundation(text: String) throws {
        let formatter = ISO8601DateFormatter()
        if text.contains(".") { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
        let expected = try #require(formatter.date(from: text))
        let date = try #require(RFC3339.date(from: text))
        #expect(abs(date.timeIntervalSince(expected)) < 1e-6)
    }

    @Test("lower-case t and z, numeric offsets and a leap second name the instants they should")
    func variants() {
        let instant = RFC3339.date(from: "2024-05-01T12:34:56Z")
        #expect(instant == Date(timeIntervalSince1970: 1_714_566_896))
        #expect(RFC3339.date(from: "2024-05-01t12:34:56z") == instant)
        #expect(RFC3339.date(from: "2024-05-01T14:34:56+02:00") == instant)
        #expect(RFC3339.date(from: "2024-05-01T07:04:56-05:30") == instant)
        #expect(RFC3339.date(from: "2016-12-31T23:59:60Z") == RFC3339.date(from: "2017-01-01T00:00:00Z"))
    }

    @Test(
        "text that is not an RFC 3339 date-time is nil",
        arguments: [
            "", "2024-05-01", "2024-05-01T12:34:56", "2024-05-01 12:34:56Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z",
            "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z",
            "2024-05-01T12:34:61Z", "2024-05-01T12:34:56.Z", "2024-05-01T12:34:56Z ", "2024-05-01T12:34:56+0200",
            "2024-05-01T12:34:56+24:00", "2024-05-01T12:34:56+02:60", "+2024-05-01T12:34:56Z", "2024-5-01T12:34:56Z",
            "\u{0662}\u{0660}\u{0662}\u{0664}-05-01T12:34:56Z", "2024-05-01T12:34:56.7\u{0667}Z", "2024-05-01T12:34:56.789",
        ])
    func refused(text: String) {
        #expect(RFC3339.date(from: text) == nil)
    }
}
