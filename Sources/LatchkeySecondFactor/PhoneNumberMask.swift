/// The masking Firebase applies to phone hints: `*` for every digit but the last four.
///
/// Observed in the emulator (`+15555550100` → `+*******0100`) and in production (`+*******7074`);
/// the general rule is an inference from those two (docs/firebase-mfa-protocol.md §2). Latchkey
/// applies it to whatever a backend sends: a server-masked hint has four digits left and is shown
/// exactly as sent, and a number written with spaces, dashes or parentheses keeps its shape with
/// every digit but the last four masked (`+1 (555) 555-0100` → `+* (***) ***-0100`).
public enum PhoneNumberMask {
    /// `number` with every digit but the last four replaced by `*`.
    public static func maskedIfFull(_ number: String) -> String {
        let digits = number.count(where: isDigit)
        guard digits > 4 else { return number }
        var toMask = digits - 4
        return String(
            number.map { character in
                guard toMask > 0, isDigit(character) else { return character }
                toMask -= 1
                return "*"
            })
    }

    /// ASCII digits and every other decimal digit (a fullwidth `５` is a digit to a reader too).
    private static func isDigit(_ character: Character) -> Bool {
        character.isWholeNumber
    }
}
