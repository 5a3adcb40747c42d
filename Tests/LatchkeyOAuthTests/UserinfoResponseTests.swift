import Foundation
import Testing

@testable import LatchkeyOAuth

@Suite("Userinfo responses read through configurable member names")
struct UserinfoResponseTests {
    static func account(_ json: String, id: String = "id", name: String = "name") throws -> (subject: String?, displayName: String?) {
        try JSONDecoder().decode(UserinfoResponse.self, from: Data(json.utf8)).account(idField: id, nameField: name)
    }

    @Test("GitHub's numeric id becomes the subject as text")
    func numericID() throws {
        let account = try Self.account(#"{"login":"octocat","id":583231,"name":"The Octocat"}"#, name: "login")
        #expect(account.subject == "583231")
        #expect(account.displayName == "octocat")
    }

    @Test("string members are read as they are", arguments: ["sub", "preferred_username"])
    func stringMembers(field: String) throws {
        let account = try Self.account(#"{"sub":"248289761001","preferred_username":"j.doe","name":"Jane"}"#, id: field)
        #expect(account.subject == (field == "sub" ? "248289761001" : "j.doe"))
        #expect(account.displayName == "Jane")
    }

    @Test("a boolean is not an account id or name, even true as 1")
    func booleanRefused() throws {
        let account = try Self.account(#"{"id":true,"name":false}"#)
        #expect(account.subject == nil)
        #expect(account.displayName == nil)
    }

    @Test("a missing, empty, null or structured id gives no subject", arguments: [#"{}"#, #"{"id":""}"#, #"{"id":null}"#, #"{"id":[1]}"#])
    func noSubject(json: String) throws {
        #expect(try Self.account(json).subject == nil)
    }

    @Test("a body that is not a JSON object is not a userinfo response", arguments: ["[1]", "\"x\"", "<html>"])
    func notAnObject(body: String) {
        #expect(throws: (any Error).self) { try JSONDecoder().decode(UserinfoResponse.self, from: Data(body.utf8)) }
    }
}
