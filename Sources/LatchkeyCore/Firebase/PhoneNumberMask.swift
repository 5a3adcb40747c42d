/// The masking Firebase applies to phone hints: `+` then `*` for every digit but the last four.
///
/// Observed in the emulator (`+15555550100` → `+*******0100`) and in production (`+*******7074`);
/// the general rule is an inference from those two (docs/firebase-mfa-protocol.md §2). Latchkey applies it only
/// to numbers that arrive unmasked, so a server-masked hint is shown exactly as sent.
public enum PhoneNumberMask {
    /// Masks `number` when it is a full number (digits only after an optional `+`).
    public static func maskedIfFull(_ number: String) -> String {
        let body = number.hasPrefix("+") ? number.dropFirst() : Substring(number)
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isNumber }) else { return number }
        return mask(digits: String(body))
    }

    /// `+` followed by `*` for all digits but the last four, then those four.
    public static func mask(digits: String) -> String {
        let digitsOnly = digits.filter { $0.isASCII && $0.isNumber }
        let shown = digitsOnly.suffix(4)
        return "+" + String(repeating: "*", count: digitsOnly.count - shown.count) + shown
    }
}
