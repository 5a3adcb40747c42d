/// A QR code (ISO/IEC 18004) of some bytes: byte mode, error correction L or M, versions 1–10.
///
/// Small on purpose: a device-flow verification URL is under 100 bytes, which version 10 at M
/// (213 bytes) holds with room to spare. No runtime dependency, so the screen draws it itself.
public struct QRCode: Sendable, Equatable {
    /// How many codewords may be lost and still read: L about 7 %, M about 15 %.
    public enum ErrorCorrection: Sendable, Equatable {
        case low, medium

        /// The two format-information bits (ISO/IEC 18004 table 12).
        var formatBits: Int { self == .low ? 1 : 0 }
    }

    public let version: Int
    public let errorCorrection: ErrorCorrection
    public let mask: Int
    /// `modules[row][column]`, true for dark; `size` × `size`.
    public let modules: [[Bool]]

    public var size: Int { modules.count }

    /// Encodes `bytes` in the smallest version that holds them, with the mask of lowest penalty
    /// unless `mask` (0–7) is given; nil when even version 10 is too small.
    public init?(bytes: [UInt8], errorCorrection: ErrorCorrection = .medium, mask: Int? = nil) {
        guard let version = (1...10).first(where: { Self.fits(bytes.count, version: $0, errorCorrection) }) else { return nil }
        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.drawCodewords(Self.codewords(bytes, version: version, errorCorrection))
        let chosen =
            mask
            ?? (0..<8).min { first, second in
                matrix.masked(first, errorCorrection).penalty < matrix.masked(second, errorCorrection).penalty
            }!
        self.version = version
        self.errorCorrection = errorCorrection
        self.mask = chosen
        modules = matrix.masked(chosen, errorCorrection).modules
    }

    public init?(text: String, errorCorrection: ErrorCorrection = .medium) {
        self.init(bytes: Array(text.utf8), errorCorrection: errorCorrection)
    }

    // MARK: - Capacity (ISO/IEC 18004 table 9)

    /// Error correction codewords per block, and the blocks' data lengths, for versions 1–10.
    struct Blocks {
        var correctionPerBlock: Int
        var dataLengths: [Int]
    }

    static func blocks(version: Int, _ level: ErrorCorrection) -> Blocks {
        // (ec per block, [(count, data codewords)]) for L and M.
        let low: [(Int, [(Int, Int)])] = [
            (7, [(1, 19)]), (10, [(1, 34)]), (15, [(1, 55)]), (20, [(1, 80)]), (26, [(1, 108)]),
            (18, [(2, 68)]), (20, [(2, 78)]), (24, [(2, 97)]), (30, [(2, 116)]), (18, [(2, 68), (2, 69)]),
        ]
        let medium: [(Int, [(Int, Int)])] = [
            (10, [(1, 16)]), (16, [(1, 28)]), (26, [(1, 44)]), (18, [(2, 32)]), (24, [(2, 43)]),
            (16, [(4, 27)]), (18, [(4, 31)]), (22, [(2, 38), (2, 39)]), (22, [(3, 36), (2, 37)]), (26, [(4, 43), (1, 44)]),
        ]
        let (correction, groups) = (level == .low ? low : medium)[version - 1]
        return Blocks(correctionPerBlock: correction, dataLengths: groups.flatMap { Array(repeating: $0.1, count: $0.0) })
    }

    static func fits(_ count: Int, version: Int, _ level: ErrorCorrection) -> Bool {
        let capacityBits = blocks(version: version, level).dataLengths.reduce(0, +) * 8
        return 4 + countBits(version) + count * 8 <= capacityBits
    }

    /// Bits of the byte-mode character count: 8 up to version 9, 16 from 10.
    static func countBits(_ version: Int) -> Int { version <= 9 ? 8 : 16 }

    // MARK: - Codewords

    /// Data codewords (mode, count, bytes, terminator, padding), split into blocks, each with
    /// its Reed–Solomon codewords, interleaved.
    static func codewords(_ bytes: [UInt8], version: Int, _ level: ErrorCorrection) -> [UInt8] {
        let layout = blocks(version: version, level)
        let capacity = layout.dataLengths.reduce(0, +)
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, countBits(version))
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacity * 8 - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < capacity {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        var blocks: [[UInt8]] = []
        var offset = 0
        for length in layout.dataLengths {
            blocks.append(Array(data[offset..<offset + length]))
            offset += length
        }
        let divisor = ReedSolomon.divisor(degree: layout.correctionPerBlock)
        let corrections = blocks.map { ReedSolomon.remainder($0, divisor: divisor) }
        var result: [UInt8] = []
        for index in 0..<(layout.dataLengths.max() ?? 0) {
            for block in blocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<layout.correctionPerBlock {
            for correction in corrections { result.append(correction[index]) }
        }
        return result
    }

    // MARK: - Drawing

    /// Two rows of modules per line of text with the half blocks ▀ ▄ █, `quietZone` light
    /// modules around. The blocks are the *light* modules: drawn in the terminal's foreground
    /// on its background (light on dark), which scanners read like dark on light paper.
    public func halfBlockLines(quietZone: Int = 2) -> [String] {
        let full = size + 2 * quietZone
        func light(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - quietZone, column - quietZone)
            guard r >= 0, r < size, c >= 0, c < size else { return true }
            return !modules[r][c]
        }
        return stride(from: 0, to: full, by: 2).map { row in
            String(
                (0..<full).map { column -> Character in
                    let top = light(row, column)
                    let bottom = row + 1 < full ? light(row + 1, column) : false
                    switch (top, bottom) {
                    case (true, true): return "█"
                    case (true, false): return "▀"
                    case (false, true): return "▄"
                    case (false, false): return " "
                    }
                })
        }
    }
}

/// The module grid while it is being built: which modules are function patterns, and their colours.
private struct Matrix {
    let version: Int
    let size: Int
    var modules: [[Bool]]
    var isFunction: [[Bool]]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        isFunction = modules
    }

    mutating func set(row: Int, column: Int, _ dark: Bool) {
        modules[row][column] = dark
        isFunction[row][column] = true
    }

    /// Alignment pattern centres (ISO/IEC 18004 annex E) for versions 1–10.
    var alignmentPositions: [Int] {
        let table: [[Int]] = [
            [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
        ]
        return table[version - 1]
    }

    mutating func drawFunctionPatterns() {
        for index in 0..<size {
            set(row: 6, column: index, index % 2 == 0)
            set(row: index, column: 6, index % 2 == 0)
        }
        for (row, column) in [(3, 3), (3, size - 4), (size - 4, 3)] { drawFinder(row: row, column: column) }
        let positions = alignmentPositions
        let last = positions.count - 1
        for (i, row) in positions.enumerated() {
            for (j, column) in positions.enumerated() {
                // The three corners hold finder patterns instead.
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(row: row + dy, column: column + dx, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormat(mask: 0, .medium)  // reserves the area; the real bits come with the mask
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let bit = (bits >> index) & 1 == 1
                let (a, b) = (size - 11 + index % 3, index / 3)
                set(row: b, column: a, bit)
                set(row: a, column: b, bit)
            }
        }
    }

    /// A finder pattern centred at (`row`, `column`) with its light separator.
    private mutating func drawFinder(row: Int, column: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let (r, c) = (row + dy, column + dx)
                guard r >= 0, r < size, c >= 0, c < size else { continue }
                let distance = max(abs(dx), abs(dy))
                set(row: r, column: c, distance != 2 && distance != 4)
            }
        }
    }

    /// The 15 format bits (level and mask, BCH-protected, XOR 0x5412) in both copies.
    mutating func drawFormat(mask: Int, _ level: QRCode.ErrorCorrection) {
        let data = level.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { set(row: index, column: 8, bit(index)) }
        set(row: 7, column: 8, bit(6))
        set(row: 8, column: 8, bit(7))
        set(row: 8, column: 7, bit(8))
        for index in 9..<15 { set(row: 8, column: 14 - index, bit(index)) }
        for index in 0..<8 { set(row: 8, column: size - 1 - index, bit(index)) }
        for index in 8..<15 { set(row: size - 15 + index, column: 8, bit(index)) }
        set(row: size - 8, column: 8, true)
    }

    /// Places the codewords in the zigzag of two-module columns, right to left, skipping
    /// function modules; leftover (remainder) modules stay light.
    mutating func drawCodewords(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for vertical in 0..<size {
                for offset in 0..<2 {
                    let column = right - offset
                    let row = upward ? size - 1 - vertical : vertical
                    guard !isFunction[row][column], index < codewords.count * 8 else { continue }
                    modules[row][column] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    /// A copy with data mask `mask` applied and its format bits drawn.
    func masked(_ mask: Int, _ level: QRCode.ErrorCorrection) -> Matrix {
        var copy = self
        for row in 0..<size {
            for column in 0..<size where !isFunction[row][column] {
                if Self.maskApplies(mask, row: row, column: column) { copy.modules[row][column].toggle() }
            }
        }
        copy.drawFormat(mask: mask, level)
        return copy
    }

    static func maskApplies(_ mask: Int, row y: Int, column x: Int) -> Bool {
        switch mask {
        case 0: return (x + y) % 2 == 0
        case 1: return y % 2 == 0
        case 2: return x % 3 == 0
        case 3: return (x + y) % 3 == 0
        case 4: return (x / 3 + y / 2) % 2 == 0
        case 5: return x * y % 2 + x * y % 3 == 0
        case 6: return (x * y % 2 + x * y % 3) % 2 == 0
        default: return ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }

    /// The four penalty rules of ISO/IEC 18004 §7.8.3: runs, 2×2 blocks, finder-like
    /// patterns, and imbalance of dark and light.
    var penalty: Int {
        var total = 0
        let columns = (0..<size).map { column in modules.map { $0[column] } }
        let finderLike: [[Bool]] = [
            [true, false, true, true, true, false, true, false, false, false, false],
            [false, false, false, false, true, false, true, true, true, false, true],
        ]
        for line in modules + columns {
            var run = 1
            for index in 1..<line.count {
                if line[index] == line[index - 1] {
                    run += 1
                } else {
                    if run >= 5 { total += run - 2 }
                    run = 1
                }
            }
            if run >= 5 { total += run - 2 }
            for start in 0...(line.count - 11) {
                for pattern in finderLike where Array(line[start..<start + 11]) == pattern { total += 40 }
            }
        }
        for row in 0..<size - 1 {
            for column in 0..<size - 1 {
                let colour = modules[row][column]
                if modules[row][column + 1] == colour && modules[row + 1][column] == colour && modules[row + 1][column + 1] == colour {
                    total += 3
                }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let cells = size * size
        let deviation = abs(dark * 20 - cells * 10)
        total += ((deviation + cells - 1) / cells - 1) * 10
        return total
    }
}

/// Reed–Solomon over GF(256) with the QR polynomial x⁸ + x⁴ + x³ + x² + 1.
enum ReedSolomon {
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var result = 0
        for shift in stride(from: 7, through: 0, by: -1) {
            result = (result << 1) ^ ((result >> 7) * 0x11D)
            result ^= ((Int(y) >> shift) & 1) * Int(x)
        }
        return UInt8(result)
    }

    /// The generator polynomial ∏(x − αⁱ), i < degree, highest coefficient (1) left out.
    static func divisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    /// The error correction codewords of `data`.
    static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }
}
