import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeyProviders

@Suite("kind = \"firebase\" provider files")
struct FirebaseProviderFileTests {
    func parse(_ text: String) -> Result<Provider, ProviderFileErrors> {
        ProviderFileParser().parse(text, file: "/etc/latchkey/providers.d/fb.toml")
    }

    @Test("a minimal file gets Google's endpoints and behaves as an OpenID issuer for its project")
    func minimal() throws {
        let provider = try parse(
            """
            display_name = "My app"
            kind = "firebase"
            api_key = "AIzaFake"
            project_id = "my-project"
            """
        ).get()
        let settings = provider.asFirebase.settings
        #expect(settings.firstFactor == .password)
        #expect(settings.mfaBackend == .firebase)
        #expect(settings.identityToolkitURL.absoluteString == "https://identitytoolkit.googleapis.com")
        #expect(settings.tokenEndpoint.absoluteString == "https://securetoken.googleapis.com/v1/token")
        #expect(settings.issuer == "https://securetoken.google.com/my-project")
        #expect(settings.idTokenExpectation.audience == "my-project")
        #expect(provider.kindName == "firebase" && provider.redirectURITemplate == nil)
    }

    @Test("every field is read: federated first factor, emulator URLs, JWKS and an exec backend")
    func full() throws {
        let provider = try parse(
            """
            display_name = "Emulated"
            kind = "firebase"
            api_key = "k"
            project_id = "demo-latchkey"
            first_factor = "provider:corp"
            identitytoolkit_url = "http://127.0.0.1:9099/identitytoolkit.googleapis.com"
            securetoken_url = "http://127.0.0.1:9099/securetoken.googleapis.com"
            jwks_uri = "http://127.0.0.1:9099/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
            mfa_backend = "exec:/usr/local/bin/mfa-plugin"
            """
        ).get()
        let settings = provider.asFirebase.settings
        #expect(settings.firstFactor == .provider("corp"))
        #expect(settings.mfaBackend == .exec(path: "/usr/local/bin/mfa-plugin"))
        #expect(settings.tokenEndpoint.absoluteString == "http://127.0.0.1:9099/securetoken.googleapis.com/v1/token")
        #expect(settings.jwksURL.path.hasSuffix("securetoken@system.gserviceaccount.com"))
    }

    @Test("mistakes are reported per field with their lines")
    func mistakes() throws {
        guard
            case .failure(let errors) = parse(
                """
                display_name = "Broken"
                kind = "firebase"
                first_factor = "sms"
                mfa_backend = "exec:relative/path"
                identitytoolkit_url = "http://example.com"
                client_id = "x"
                """)
        else {
            Issue.record("a broken file parsed")
            return
        }
        let byField = Dictionary(errors.errors.map { ($0.field ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byField.keys) == ["first_factor", "mfa_backend", "identitytoolkit_url", "client_id", "api_key", "project_id"])
        #expect(byField["first_factor"]?.line == 3)
        #expect(byField["client_id"]?.message.contains("not used by kind") == true)
    }

    @Test("an exec backend needs neither api_key nor project_id; firebase keys elsewhere are refused")
    func execAndStrayKeys() throws {
        _ = try parse("display_name = \"Demo\"\nkind = \"firebase\"\nmfa_backend = \"exec:/opt/plugin\"\n").get()
        guard
            case .failure(let errors) = parse(
                "display_name = \"X\"\nkind = \"oidc\"\nissuer = \"https://idp.example.com\"\napi_key = \"k\"\n")
        else {
            Issue.record("api_key was accepted on an oidc provider")
            return
        }
        #expect(errors.errors.map(\.field) == ["api_key"])
    }
}
