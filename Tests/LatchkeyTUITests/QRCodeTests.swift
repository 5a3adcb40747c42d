import Foundation
import Testing

@testable import LatchkeyTUI

@Suite("The QR encoder: byte mode, versions 1–10, Reed–Solomon, masks")
struct QRCodeTests {
    static let zbarimg = "/usr/bin/zbarimg"

    @Test("the matrix matches a reference encoder's bit for bit (versions 1, 4 and 9, levels L and M)", arguments: QRCodeVectors.all)
    func matchesReference(_ vector: QRCodeVectors.Vector) throws {
        let code = try #require(QRCode(bytes: Array(vector.text.utf8), errorCorrection: vector.errorCorrection, mask: vector.mask))
        #expect(code.version == vector.version)
        let rows = code.modules.map { String($0.map { $0 ? "#" : "." }) }
        #expect(rows == vector.rows)
    }

    @Test("Reed–Solomon: the generator of degree 7 and the remainder of a known block")
    func reedSolomon() {
        // ISO/IEC 18004 annex A: g(x) for 7 EC codewords has exponents 0, 87, 229, 146, 149, 238, 102, 21.
        #expect(ReedSolomon.divisor(degree: 7) == [127, 122, 154, 164, 11, 68, 117])
        // A codeword polynomial with its remainder appended divides by g(x) with nothing left.
        let data: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        let divisor = ReedSolomon.divisor(degree: 10)
        let correction = ReedSolomon.remainder(data, divisor: divisor)
        #expect(correction == [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
        #expect(ReedSolomon.remainder(data + correction, divisor: divisor) == Array(repeating: 0, count: 10))
    }

    @Test("the smallest version that holds the text is chosen, and more than version 10 holds is refused")
    func versionChoice() throws {
        #expect(try #require(QRCode(text: "hi")).version == 1)
        #expect(try #require(QRCode(text: String(repeating: "x", count: 14))).version == 1)
        #expect(try #require(QRCode(text: String(repeating: "x", count: 15))).version == 2)
        #expect(try #require(QRCode(text: String(repeating: "x", count: 213))).version == 10)
        #expect(QRCode(text: String(repeating: "x", count: 214)) == nil)
    }

    @Test("the chosen mask is the one with the lowest penalty")
    func maskChoice() throws {
        let text = "http://127.0.0.1:8000/o/device/?user_code=ABCD1234"
        let chosen = try #require(QRCode(text: text))
        let others = (0..<8).compactMap { QRCode(bytes: Array(text.utf8), mask: $0) }
        #expect(others.count == 8)
        #expect(others.contains(chosen))
    }

    @Test("half blocks carry two module rows per text row, light modules drawn, with the quiet zone")
    func halfBlocks() throws {
        let code = try #require(QRCode(text: "hi"))
        let lines = code.halfBlockLines(quietZone: 2)
        #expect(lines.count == (21 + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == 25 })
        #expect(lines[0] == String(repeating: "█", count: 25), "the first two rows are quiet zone")
        // Decode the blocks back into modules: the drawing is lossless.
        var decoded: [[Bool]] = []
        for line in lines {
            let pairs = line.map { character -> (Bool, Bool) in
                switch character {
                case "█": return (true, true)
                case "▀": return (true, false)
                case "▄": return (false, true)
                default: return (false, false)
                }
            }
            decoded.append(pairs.map(\.0))
            decoded.append(pairs.map(\.1))
        }
        let modules = decoded[2..<23].map { Array($0[2..<23]).map { !$0 } }
        #expect(modules == code.modules)
    }

    @Test(
        "zbarimg reads the drawn code back as the verification URL",
        .enabled(if: FileManager.default.isExecutableFile(atPath: zbarimg), "needs zbarimg (apt-get install zbar-tools)"))
    func zbarReadsIt() throws {
        for text in [
            "http://127.0.0.1:43123/o/device/?user_code=QW3R-T9ZX",
            "https://example.test/activate?code=" + String(repeating: "ab", count: 60),
        ] {
            let code = try #require(QRCode(text: text))
            let scale = 4
            let quiet = 4
            let side = (code.size + 2 * quiet) * scale
            var pbm = "P1\n\(side) \(side)\n"
            for y in 0..<side {
                let row = (0..<side).map { x -> String in
                    let (r, c) = (y / scale - quiet, x / scale - quiet)
                    let dark = r >= 0 && r < code.size && c >= 0 && c < code.size && code.modules[r][c]
                    return dark ? "1" : "0"
                }
                pbm += row.joined(separator: " ") + "\n"
            }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-qr-\(UUID().uuidString).pbm")
            try pbm.write(to: file, atomically: true, encoding: .ascii)
            defer { try? FileManager.default.removeItem(at: file) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.zbarimg)
            process.arguments = ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", file.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines) == text)
        }
    }
}
