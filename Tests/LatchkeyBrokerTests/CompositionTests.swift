import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAccounts
@testable import LatchkeyBroker
@testable import LatchkeyProviders

@Suite("The composition root")
struct CompositionTests {
    static func provider(_ name: String) -> String {
        "display_name = \"\(name)\"\nkind = \"oidc\"\nissuer = \"https://\(name).example.com\"\nclient_id = \"latchkey\"\n"
    }

    @Test("providers.d is read when a provider is first asked for, and only then")
    func providersAreReadOnFirstUse() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = [
            "HOME": directory.path, "XDG_CONFIG_HOME": directory.path + "/config", "XDG_DATA_HOME": directory.path + "/data",
            "LATCHKEY_PROVIDERS_DIR": directory.path + "/providers",
        ]
        try directory.write("providers/first.toml", Self.provider("first"))
        let composition = Composition(environment: environment, passphrase: FixedPassphrase())
        try directory.write("providers/second.toml", Self.provider("second"))
        #expect(composition.catalog.providers.map(\.name) == ["first", "second"])
        try directory.write("providers/third.toml", Self.provider("third"))
        #expect(composition.service.catalog.providers.map(\.name) == ["first", "second"])
    }
}
