import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyProviders
@testable import LatchkeySecondFactor
@testable import LatchkeyVault

/// RFC 8707 §2.2 and the MCP authorization specification: an account whose provider file lists
/// `resources` asks for them on every token request of its own tokens, not on the authorization
/// request alone.
@Suite("The provider file's resources on every token request")
struct ResourceParameterTests {
    static let resources = ["https://mcp.example.com/mcp", "https://api.example.com/"]

    @Test("the authorization request, the code exchange and each refresh carry every resource the provider file lists")
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

    @Test("a provider file without resources sends none")
    func none() async throws {
        let server = FakeAuthorizationServer()
        let service = server.service(keystore: InMemoryKeystore())
        _ = try await service.signIn(provider: server.provider, interaction: ScriptedPerson { _, _ in .cancel })
        _ = try await service.refresh(AccountSelector(provider: "corp"))
        #expect(server.transport.sent(to: "/token").allSatisfy { $0.formValues("resource").isEmpty })
    }
}
