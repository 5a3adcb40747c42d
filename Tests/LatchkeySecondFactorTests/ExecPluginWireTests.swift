import Foundation
import Testing

@testable import LatchkeySecondFactor

@Suite("The exec plugin's request and answer lines (latchkey-mfa-plugin(7))")
struct ExecPluginWireTests {
    static func line(_ request: ExecBackend.PluginRequest) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(request), as: UTF8.self)
    }

    static func answer(_ json: String) throws -> ExecBackend.PluginAnswer {
        try JSONDecoder().decode(ExecBackend.PluginAnswer.self, from: Data(json.utf8))
    }

    @Test("a request carries version, provider and type, and leaves absent members out")
    func requestLine() throws {
        var request = ExecBackend.PluginRequest("finalize", provider: "demo")
        request.pending = "p1"
        request.hint = ExecBackend.PluginRequest.Hint(SecondFactorHint(id: "work", kind: .phone, displayName: nil, phoneNumber: nil))
        request.code = "123456"
        #expect(
            try Self.line(request)
                == #"{"code":"123456","hint":{"id":"work","kind":"phone"},"pending":"p1","provider":"demo","type":"finalize","version":1}"#)
    }

    @Test("request members use the manual's snake_case names")
    func snakeCaseMembers() throws {
        var request = ExecBackend.PluginRequest("first_factor", provider: "demo")
        request.method = "federated"
        request.providerID = "google.com"
        request.idToken = "t"
        #expect(try Self.line(request).contains(#""id_token":"t","method":"federated","provider":"demo","provider_id":"google.com""#))
        var enroll = ExecBackend.PluginRequest("enroll_finalize", provider: "demo")
        enroll.phoneNumber = "+15555550100"
        enroll.displayName = "Desk"
        enroll.refreshToken = "r"
        let line = try Self.line(enroll)
        #expect(line.contains(#""display_name":"Desk""#) && line.contains(#""phone_number":"+15555550100""#))
        #expect(line.contains(#""refresh_token":"r""#))
    }

    @Test("a tokens answer is read with its account and expiry")
    func tokensAnswer() throws {
        let answer = try Self.answer(
            #"{"type":"tokens","id_token":"i","refresh_token":"r","expires_in":3600,"second_factor":"phone","account":{"issuer":"urn:x","subject":"u1","display_name":"Bob"}}"#
        )
        #expect(answer.type == "tokens" && answer.idToken == "i" && answer.refreshToken == "r")
        #expect(answer.expiresIn == 3600)
        #expect(answer.secondFactor == "phone")
        #expect(answer.account?.subject == "u1" && answer.account?.issuer == "urn:x" && answer.account?.displayName == "Bob")
    }

    @Test(
        "expires_in is read as every lifetime from the wire (WireLifetime): digits as text too; a boolean, a fraction or a negative is absent"
    )
    func expiresInForms() throws {
        #expect(try Self.answer(#"{"type":"tokens","id_token":"i","expires_in":true}"#).expiresIn == nil)
        #expect(try Self.answer(#"{"type":"tokens","id_token":"i","expires_in":"3600"}"#).expiresIn == 3600)
        #expect(try Self.answer(#"{"type":"tokens","id_token":"i","expires_in":3600.9}"#).expiresIn == nil)
        #expect(try Self.answer(#"{"type":"tokens","id_token":"i","expires_in":-5}"#).expiresIn == nil)
    }

    @Test("members of the wrong type read as absent, so the validation names them")
    func wrongTypes() throws {
        let answer = try Self.answer(#"{"type":"hints","pending":1,"hints":[{"id":"a","kind":"phone"},"junk"],"account":"me"}"#)
        #expect(answer.pending == nil)
        #expect(answer.hints == nil)
        #expect(answer.account == nil)
    }

    @Test("an answer that is not a JSON object is refused", arguments: ["[]", "\"tokens\"", "not json"])
    func notAnObject(line: String) {
        #expect(throws: (any Error).self) { try Self.answer(line) }
    }
}
