import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyKeystore
@testable import LatchkeyVault

@Suite("PROVIDER[:ACCOUNT] selectors")
struct AccountSelectorTests {
    @Test("a bare provider name selects the only account there")
    func bareProvider() {
        #expect(AccountSelector(parsing: "google") == AccountSelector(provider: "google", account: nil))
    }

    @Test("text after the first colon names the account")
    func providerAndAccount() {
        #expect(AccountSelector(parsing: "google:alice@example.com") == AccountSelector(provider: "google", account: "alice@example.com"))
    }

    @Test("only the first colon splits: account names may contain colons")
    func colonInAccount() {
        #expect(AccountSelector(parsing: "a:b:c") == AccountSelector(provider: "a", account: "b:c"))
    }

    @Test("a trailing colon means no account")
    func trailingColon() {
        #expect(AccountSelector(parsing: "google:") == AccountSelector(provider: "google", account: nil))
    }

    @Test("a selector prints the way it is typed")
    func description() {
        #expect(AccountSelector(parsing: "a:b:c").description == "a:b:c")
        #expect(AccountSelector(parsing: "google").description == "google")
    }

    static let alice = AccountRecord.testing(provider: "google", subject: "1001", displayName: "alice@example.com")
    static let bob = AccountRecord.testing(provider: "google", subject: "1002", displayName: "bob@example.com")
    static let octocat = AccountRecord.testing(provider: "github", subject: "583231", displayName: "octocat")

    @Test("no account at the provider is 'not signed in', listing what is signed in there")
    func none() {
        #expect(throws: AccountSelectionError.notSignedIn(AccountSelector(provider: "gitlab"), available: [])) {
            try AccountSelector(parsing: "gitlab").select(from: [Self.alice, Self.octocat])
        }
        #expect(
            throws: AccountSelectionError.notSignedIn(
                AccountSelector(provider: "google", account: "carol"), available: ["alice@example.com", "bob@example.com"])
        ) {
            try AccountSelector(parsing: "google:carol").select(from: [Self.alice, Self.bob])
        }
    }

    @Test("the one account at the provider is selected without naming it")
    func one() throws {
        #expect(try AccountSelector(parsing: "google").select(from: [Self.alice, Self.octocat]) == Self.alice)
        #expect(try AccountSelector(parsing: "github").select(from: [Self.alice, Self.octocat]) == Self.octocat)
    }

    @Test("several accounts at the provider need a name, by display name or subject")
    func ambiguous() throws {
        let records = [Self.alice, Self.bob, Self.octocat]
        #expect(
            throws: AccountSelectionError.ambiguous(
                AccountSelector(provider: "google"), candidates: ["alice@example.com", "bob@example.com"])
        ) {
            try AccountSelector(parsing: "google").select(from: records)
        }
        #expect(try AccountSelector(parsing: "google:bob@example.com").select(from: records) == Self.bob)
        #expect(try AccountSelector(parsing: "google:1001").select(from: records) == Self.alice)
    }

    @Test("an account name is matched at its own provider only")
    func accountAtOtherProvider() {
        #expect(throws: AccountSelectionError.self) {
            try AccountSelector(parsing: "github:alice@example.com").select(from: [Self.alice, Self.octocat])
        }
    }
}

@Suite("Default accounts (latchkey default)")
struct DefaultAccountTests {
    static func record(_ subject: String, name: String?, isDefault: Bool? = nil) -> AccountRecord {
        var record = AccountRecord(
            provider: "p", issuer: "https://idp.example.com", subject: subject, displayName: name, accessToken: Secret("t-\(subject)"),
            tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [], createdAt: Date(), updatedAt: Date())
        record.isDefault = isDefault
        return record
    }

    @Test("a bare provider name selects the default account when there are several")
    func bareNameSelectsDefault() throws {
        let records = [Self.record("x", name: "alice"), Self.record("y", name: "bob", isDefault: true)]
        #expect(try AccountSelector(parsing: "p").select(from: records).subject == "y")
        #expect(try AccountSelector(parsing: "p:alice").select(from: records).subject == "x")
    }

    @Test("without a default, several accounts stay ambiguous and the message says how to choose one")
    func noDefaultIsAmbiguous() {
        let records = [Self.record("x", name: "alice"), Self.record("y", name: "bob")]
        #expect(throws: AccountSelectionError.ambiguous(AccountSelector(parsing: "p"), candidates: ["alice", "bob"])) {
            try AccountSelector(parsing: "p").select(from: records)
        }
        #expect(AccountSelectionError.ambiguous(AccountSelector(parsing: "p"), candidates: []).description.contains("latchkey default"))
    }

    @Test("a name that matches two accounts stays ambiguous even when one is the default")
    func explicitAmbiguityIgnoresDefault() {
        let records = [Self.record("x", name: "alice", isDefault: true), Self.record("y", name: "x")]
        #expect(throws: AccountSelectionError.self) { try AccountSelector(parsing: "p:x").select(from: records) }
    }

    @Test("the fast path's selectors follow the default: the bare provider name points at it")
    func tokenCopiesFollowTheDefault() {
        let records = [Self.record("x", name: "alice"), Self.record("y", name: "bob", isDefault: true)]
        let selectors = TokenCopies.selectors(for: records)
        #expect(selectors[AccountSelector(parsing: "p")] == 1)
        #expect(selectors[AccountSelector(parsing: "p:alice")] == 0)
    }
}
