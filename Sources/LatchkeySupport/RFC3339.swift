package import Foundation

/// RFC 3339 timestamps (`2024-05-01T12:34:56.789Z`) read from text a server sent, in Swift alone.
///
/// Fuzzing found (2026-11-23) that `ISO8601DateFormatter.date(from:)` hands the text to ICU, whose
/// `SimpleDateFormat::subParse` scales a fraction of seconds by dividing by 10^(digits − 3)
/// computed in 32 bits: from 35 digits on the divisor wraps to 0 and the process dies of SIGFPE.
/// So no outside timestamp goes to a formatter; this reads RFC 3339 §5.6 `date-time` exactly:
/// `YYYY-MM-DD`, `T`, `hh:mm:ss`, an optional `.` fraction of any length (kept to the
/// nanosecond), then `Z` or `±hh:mm`. `t` and `z` may be lower case (§5.6, note); a leap second
/// (`:60`) reads as the second after. Anything else, calendar days that do not exist included,
/// is `nil`.
package enum RFC3339 {
    package static func date(from text: String) -> Date? {
        var reader = Reader(bytes: Array(text.utf8))
        guard let year = reader.number(digits: 4), reader.skip("-"),
            let month = reader.number(digits: 2), reader.skip("-"),
            let day = reader.number(digits: 2), reader.skip("T") || reader.skip("t"),
            let hour = reader.number(digits: 2), reader.skip(":"),
            let minute = reader.number(digits: 2), reader.skip(":"),
            let second = reader.number(digits: 2)
        else { return nil }
        var nanoseconds = 0
        if reader.skip(".") {
            let digits = reader.digits()
            guard !digits.isEmpty else { return nil }
            // The first nine digits, as nanoseconds; the rest is below what a Date keeps anyway.
            for place in 0..<9 {
                nanoseconds = nanoseconds * 10 + (place < digits.count ? Int(digits[digits.startIndex + place] - UInt8(ascii: "0")) : 0)
            }
        }
        let offset: Int
        if reader.skip("Z") || reader.skip("z") {
            offset = 0
        } else {
            let sign: Int
            if reader.skip("+") {
                sign = 1
            } else if reader.skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHour = reader.number(digits: 2), reader.skip(":"), let offsetMinute = reader.number(digits: 2),
                offsetHour < 24, offsetMinute < 60
            else { return nil }
            offset = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard reader.atEnd, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`);
    /// `year` is 0…9999 here, so nothing overflows.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// A cursor over the text's UTF-8 bytes; only ASCII digits count as digits.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        /// Exactly `digits` ASCII digits, as a number.
        mutating func number(digits count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard Self.isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// Every ASCII digit from here on (possibly none).
        mutating func digits() -> ArraySlice<UInt8> {
            let start = index
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
            return bytes[start..<index]
        }

        private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    }
}
