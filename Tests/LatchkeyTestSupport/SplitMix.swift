/// A seeded generator, so a failure names inputs that can be made again.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension SplitMix {
    /// `count` copies of `valid`, each with one to four mutations: a byte replaced by one of
    /// `pieces`, a byte removed, or up to `span` bytes repeated in place. For readers of a
    /// server's answers: each mutant must be read or refused, never crash.
    public mutating func mutants(of valid: [UInt8], pieces: [UInt8], count: Int, span: Int) -> [[UInt8]] {
        (0..<count).map { _ in
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &self) where !bytes.isEmpty {
                let index = Int.random(in: 0..<bytes.count, using: &self)
                switch Int.random(in: 0...2, using: &self) {
                case 0: bytes[index] = pieces.randomElement(using: &self)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(contentsOf: bytes[index..<min(bytes.count, index + span)], at: index)
                }
            }
            return bytes
        }
    }
}
