import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyVault

/// The vault's own JSON reader must read exactly what `JSONDecoder` reads from what the vault
/// writes, and refuse what is not JSON, so `VaultContents.decode` can use it first.
@Suite struct VaultRecordReaderTests {
    private static let awkwardTexts = [
        "", "plain", "quote \" and backslash \\", "slash / and https://issuer.example/path", "tab\tnew line\nreturn\r",
        "bell \u{07} nul \u{00} escape \u{1B}[31m del \u{7F}", "é ß 漢字", "emoji 🗝️ and flag 🇬🇧", "\u{2028}\u{2029}",
        "\u{FEFF}bom", "}{][,:\"", "null", "true",
    ]

    private static func everyField(text: String, date: Double, isDefault: Bool?) -> AccountRecord {
        var record = AccountRecord(
            provider: "p-\(text)", issuer: "https://issuer/\(text)", subject: "s\(text)", displayName: text,
            accessToken: Secret("a\(text)"), tokenType: "Bearer", refreshToken: Secret("r\(text)"), idToken: Secret("i\(text)"),
            expiresAt: Date(timeIntervalSince1970: date), scopes: ["openid", text, ""], secondFactor: "phone \(text)",
            createdAt: Date(timeIntervalSince1970: date - 3600.5), updatedAt: Date(timeIntervalSince1970: date - 0.25),
            lastError: "error: \(text)")
        record.isDefault = isDefault
        record.dpopKey = Secret("k\(text)")
        record.narrowedTokens = [
            NarrowedToken(
                resource: "https://api.example/\(text)", scopes: [text], accessToken: Secret("n\(text)"), tokenType: "DPoP",
                expiresAt: Date(timeIntervalSince1970: date), issuedAt: Date(timeIntervalSince1970: date - 1),
                lastUsedAt: Date(timeIntervalSince1970: date - 0.5)),
            NarrowedToken(
                resource: nil, scopes: [], accessToken: Secret(text), tokenType: "Bearer", expiresAt: nil,
                issuedAt: Date(timeIntervalSince1970: date)),
        ]
        record.awsCredentials = [
            AWSRoleCredential(
                roleARN: "arn:aws:iam::123456789012:role/\(text)", sessionName: text, endpoint: "https://sts/\(text)",
                accessKeyID: "ASIA\(text)", secretAccessKey: Secret("s\(text)"), sessionToken: Secret("t\(text)"),
                expiresAt: Date(timeIntervalSince1970: date), issuedAt: Date(timeIntervalSince1970: date - 1),
                lastUsedAt: index(of: text).isMultiple(of: 2) ? nil : Date(timeIntervalSince1970: date - 0.5))
        ]
        return record
    }

    private static func index(of text: String) -> Int { awkwardTexts.firstIndex(of: text) ?? 0 }

    private static func readerRecords(_ bytes: [UInt8]) throws -> [AccountRecord] {
        var reader = VaultRecordReader(bytes)
        return try reader.records()
    }

    private static func decoderRecords(_ bytes: [UInt8]) throws -> [AccountRecord] {
        struct Contents: Decodable { var accounts: [AccountRecord] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(Contents.self, from: Data(bytes)).accounts
    }

    @Test func readsEveryFieldOfWhatTheVaultWritesAsJSONDecoderDoes() throws {
        let dates = [0, 1_795_000_000, 1_795_000_000.123456, -1e300, 1e300, Double.leastNonzeroMagnitude, -0.5, 9.3e18]
        let records = Self.awkwardTexts.enumerated().map { index, text in
            Self.everyField(text: text, date: dates[index % dates.count], isDefault: [true, false, nil][index % 3])
        }
        let bytes = try VaultContents.encode(records)
        #expect(try Self.readerRecords(bytes) == records)
        #expect(try Self.readerRecords(bytes) == Self.decoderRecords(bytes))
    }

    @Test func readsRecordsWithoutTheirOptionalFieldsAndAnEmptyVault() throws {
        let bare = AccountRecord(
            provider: "p", issuer: "i", subject: "s", displayName: nil, accessToken: Secret("a"), tokenType: "Bearer",
            refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [], createdAt: Date(timeIntervalSince1970: 1),
            updatedAt: Date(timeIntervalSince1970: 2))
        #expect(try Self.readerRecords(try VaultContents.encode([bare, bare])) == [bare, bare])
        #expect(try Self.readerRecords(try VaultContents.encode([])) == [])
    }

    @Test func agreesWithJSONDecoderOnRandomRecords() throws {
        var generator = SplitMix(seed: 0x1A7C_4EE7)
        for _ in 0..<200 {
            let scalars = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                Character(Unicode.Scalar(UInt32.random(in: 0...0x2FFF, using: &generator)) ?? "?")
            }
            let record = Self.everyField(
                text: String(scalars), date: Double.random(in: -4e9...4e9, using: &generator),
                isDefault: Bool.random(using: &generator) ? nil : Bool.random(using: &generator))
            let bytes = try VaultContents.encode([record])
            #expect(try Self.readerRecords(bytes) == Self.decoderRecords(bytes))
        }
    }

    @Test func skipsKeysItDoesNotKnowAsJSONDecoderDoes() throws {
        let text = """
            {"format": {"nested": [1, -2.5e3, true, false, null, "x", {"y": []}]},
             "accounts": [{"accessToken": "a", "createdAt": 1, "future": {"a": [null]}, "issuer": "i",
                           "provider": "p", "scopes": ["s"], "subject": "s", "tokenType": "Bearer",
                           "updatedAt": 2.5, "displayName": null, "isDefault": true}]}
            """
        let bytes = Array(text.utf8)
        let records = try Self.readerRecords(bytes)
        #expect(records == (try Self.decoderRecords(bytes)))
        #expect(records.first?.isDefault == true && records.first?.displayName == nil)
    }

    @Test(arguments: [
        #"{"accounts": []} x"#, #"{"accounts": [}"#, #"{"accounts": [],}"#, #"{"other": 1}"#, #"{"accounts": [{}]}"#,
        #"{"accounts": [], "x": inf}"#, #"{"accounts": [], "x": +1}"#, #"{"accounts": [], "x": 01}"#, #"{"accounts": [], "x": 1.}"#,
        #"{"accounts": [], "x": 1e999}"#, #"{"accounts": [], "x": "\ud800"}"#, #"{"accounts": [], "x": "\udc00"}"#,
        #"{"accounts": [], "x": "\x"}"#, "{\"accounts\": [], \"x\": \"\u{01}\"}", #"{"accounts": [], "x": "\u12"}"#,
        #"{"accounts": [], "x": "open"#, #"{"accounts": [], "x": nul}"#, "", "[]",
    ])
    func refusesWhatIsNotWellFormed(_ text: String) {
        #expect(throws: VaultRecordReader.Malformed.self) { try Self.readerRecords(Array(text.utf8)) }
    }

    @Test func refusesInvalidUTF8InsideAString() {
        let bytes = Array(#"{"accounts": [], "x": ""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: VaultRecordReader.Malformed.self) { try Self.readerRecords(bytes) }
    }

    @Test func whatTheReaderRefusesButJSONDecoderReadsStillDecodes() throws {
        // A number JSONDecoder reads as a whole Double but this reader's grammar does not
        // cover is hard to find; a UTF-16 document (which JSONDecoder detects) is one.
        let record = AccountRecord.testing()
        let utf8 = try VaultContents.encode([record])
        let units = String(decoding: utf8, as: UTF8.self).utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let utf16: [UInt8] = [0xFF, 0xFE] + units
        #expect(throws: VaultRecordReader.Malformed.self) { try Self.readerRecords(utf16) }
        #expect(try VaultContents.decode(utf16) == [record])
    }
}
