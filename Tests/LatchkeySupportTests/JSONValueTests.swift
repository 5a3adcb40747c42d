import Foundation
import Testing

@testable import LatchkeySupport

@Suite("JSON values read without mistaking booleans for numbers")
struct JSONValueTests {
    static func value(_ json: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
    }

    @Test("true and false are booleans, never the numbers 1 and 0")
    func booleans() throws {
        #expect(try Self.value("true") == .bool(true))
        #expect(try Self.value("false") == .bool(false))
        #expect(try Self.value("true").number == nil)
        #expect(try Self.value("true").wholeNumber == nil)
        #expect(try Self.value("true").text == nil)
    }

    @Test("0 and 1 are numbers, not booleans", arguments: [0, 1])
    func zeroAndOne(number: Int) throws {
        #expect(try Self.value(String(number)) == .number(Double(number)))
        #expect(try Self.value(String(number)).wholeNumber == number)
    }

    @Test("a whole number is written out without a fraction; other numbers keep theirs")
    func numbersAsText() throws {
        #expect(try Self.value("583231").text == "583231")
        #expect(try Self.value("5.0").text == "5")
        #expect(try Self.value("2.5").text == "2.5")
        #expect(try Self.value(#""octocat""#).text == "octocat")
    }

    @Test("a fraction or a number beyond 10^15 is not a whole number")
    func notWhole() throws {
        #expect(try Self.value("3600.5").wholeNumber == nil)
        #expect(try Self.value("1e15").wholeNumber == nil)
        #expect(try Self.value("999999999999999").wholeNumber == 999_999_999_999_999)
    }

    @Test("null, arrays and objects keep their shape")
    func containers() throws {
        #expect(try Self.value("null") == .null)
        #expect(try Self.value(#"[1,"a",true]"#) == .array([.number(1), .string("a"), .bool(true)]))
        #expect(try Self.value(#"{"a":{"b":null}}"#) == .object(["a": .object(["b": .null])]))
        #expect(try Self.value("[1]").number == nil)
    }
}
