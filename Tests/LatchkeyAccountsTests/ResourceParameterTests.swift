import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// RFC 8707 §2.2 and the MCP authorization specification: an account whose provider file lists
/// one resource (an MCP server's account lists its server) asks for it on every token request of
/// its own tokens, not on the authorization request alone.
@Suite("The provider file's resource on every token request")
struct ResourceParameterTests {
    static let resources = ["https://mcp.example.com/mcp"]

    @Test("the authorization request, the code exchange and each refresh carry the resource the provider file lists")
    func everyRequest() async throws {
        var choices = ProtocolChoices()
        choices.resources = Self.resources
        let server = FakeAuthorizationServer(choices: choices)
        let keystore = InMemoryKeystore()
        let service = server.service(keystore: keystore)
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let authorization = try #require(server.browser.urls.first)
        #expect(FakeAuthorizationServer.queryItems(authorization).filter { $0.name == "resource" }.map(\.value) == Self.resources)
        let exchange = try #require(server.transport.sent(to: "/token").first)
        #expect(exchange.form["grant_type"] == "authorization_code")
        #expect(exchange.formValues("resource") == Self.resources)

        _ = try await service.refresh(AccountSelector(provider: "corp"))
        let refresh = try #require(server.transport.sent(to: "/token").last)
        #expect(refresh.form["grant_type"] == "refresh_token" && refresh.formValues("resource") == Self.resources)
    }

    @Test(
        "a provider file without resources, or with several (a token for all, which the sign-in granted), sends none to the token endpoint")
    func noneOrSeveral() async throws {
        var choices = ProtocolChoices()
        choices.resources = ["https://api.example.com/", "https://mail.example.com/"]
        let several = FakeAuthorizationServer(choices: choices)
        let serviceOfSeveral = several.service(keystore: InMemoryKeystore())
        _ = try await serviceOfSeveral.signIn(provider: several.provider, interaction: ScriptedPerson { _, _ in .cancel })
        let asked = try #require(several.browser.urls.first)
        #expect(FakeAuthorizationServer.queryItems(asked).filter { $0.name == "resource" }.count == 2)
        _ = try await serviceOfSeveral.refresh(AccountSelector(provider: "corp"))
        #expect(several.transport.sent(to: "/token").allSatisfy { $0.formValues("resource").isEmpty })

        let server = FakeAuthorizationServer()
        let service = server.service(keystore: InMemoryKeystore())
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        _ = try await service.refresh(AccountSelector(provider: "corp"))
        #expect(server.transport.sent(to: "/token").allSatisfy { $0.formValues("resource").isEmpty })
    }
}
