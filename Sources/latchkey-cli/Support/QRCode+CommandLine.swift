import Foundation
import LatchkeyTUI

/// The device flow's QR code on a plain terminal, as the screen draws it: half blocks, two
/// modules per line, with a quiet zone.
extension QRCode {
    /// Shown when stderr is a terminal; `LATCHKEY_QR=1` forces it (tests, pipes into a pager),
    /// `LATCHKEY_QR=0` turns it off.
    static func shouldShow(environment: [String: String]) -> Bool {
        switch environment["LATCHKEY_QR"] {
        case "1": return true
        case "0": return false
        default: return isatty(STDERR_FILENO) == 1
        }
    }

    /// The half-block lines, each wrapped in bright white on black unless `NO_COLOR` is set (not empty):
    /// the blocks are the light modules, so a terminal with dark text on a light background
    /// would otherwise show the code inverted, which some scanners refuse.
    func terminalLines(colored: Bool) -> [String] {
        halfBlockLines(quietZone: 2).map { colored ? "\u{1B}[97;40m\($0)\u{1B}[0m" : $0 }
    }
}
