import Foundation
import Testing

@testable import LatchkeyProviders
@testable import LatchkeyTUI

@Suite("Adding a provider from the screen")
struct AddProviderScreenTests {
    let keycloak = AddProviderScreen.Choice(
        preset: "keycloak", label: "keycloak — Keycloak", issuer: "https://keycloak.example.com/realms/myrealm", takesIssuer: true)
    let github = AddProviderScreen.Choice(preset: "github", label: "github — GitHub", issuer: nil, takesIssuer: false)

    func type(_ text: String, into state: inout AppState) {
        for character in text { _ = state.handle(.key(.character(character))) }
    }

    func screen(_ state: AppState) -> [String] {
        let terminal = RecordingTerminal(size: state.size)
        Painter(driver: terminal).paint(Renderer.render(state))
        return terminal.screen
    }

    /// `+`, then the presets arriving.
    func choosing() -> AppState {
        var state = Fixtures.state()
        #expect(state.handle(.key(.character("+"))) == [.loadPresets])
        _ = state.handle(.presetsLoaded([github, keycloak]))
        return state
    }

    @Test("+ lists the presets and an OpenID provider by issuer; a preset's form offers its issuer to edit")
    func presetForm() {
        var state = choosing()
        #expect(screen(state).contains { $0.contains("OpenID provider by its issuer (no preset)") })
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.enter))
        let lines = screen(state)
        #expect(lines.contains { $0.contains("Name") && $0.contains("keycloak") })
        #expect(lines.contains { $0.contains("Issuer") && $0.contains("realms/myrealm") })
        type("-work", into: &state)
        _ = state.handle(.key(.tab))
        for _ in 0..<7 { _ = state.handle(.key(.backspace)) }
        type("work", into: &state)
        _ = state.handle(.key(.tab))
        type("latchkey", into: &state)
        #expect(
            state.handle(.key(.enter)) == [
                .addProvider(
                    ProviderDraft(
                        preset: "keycloak", name: "keycloak-work", issuer: "https://keycloak.example.com/realms/work", clientID: "latchkey")
                )
            ])
    }

    @Test("a preset with fixed endpoints asks no issuer, and its untouched fields are left as the preset has them")
    func fixedEndpoints() {
        var state = choosing()
        _ = state.handle(.key(.enter))
        #expect(!screen(state).contains { $0.contains("Issuer") })
        _ = state.handle(.key(.tab))
        #expect(state.handle(.key(.enter)) == [.addProvider(ProviderDraft(preset: "github", name: "github"))])
    }

    @Test("a file that would not load is reported on the form and nothing changes; an added one is selected on the list")
    func failureThenSuccess() {
        var state = choosing()
        _ = state.handle(.key(.end))
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.down))
        _ = state.handle(.key(.enter))
        #expect(state.handle(.key(.tab)) == [])
        #expect(state.handle(.key(.enter)) == [], "Enter moves to the next field")
        #expect(state.handle(.key(.enter)) == [.beep], "no name, no issuer")
        #expect(screen(state).contains { $0.contains("letters, digits") })
        type("corp", into: &state)
        _ = state.handle(.key(.tab))
        type("not a url", into: &state)
        _ = state.handle(.key(.tab))
        #expect(state.handle(.key(.enter)) == [.addProvider(ProviderDraft(preset: nil, name: "corp", issuer: "not a url"))])
        _ = state.handle(
            .providerNotAdded("the provider file would not load, so it was not written:\n  corp.toml:5: issuer: not an absolute URL"))
        #expect(screen(state).contains { $0.contains("issuer: not an absolute URL") })
        guard case .addProvider(let form) = state.mode, case .form = form.step else {
            Issue.record("the form was left: \(state.mode)")
            return
        }
        let added = Fixtures.provider("corp", displayName: "Corp")
        _ = state.handle(.providerAdded(name: "corp", file: "/p/corp.toml", providers: state.providers + [added]))
        #expect(state.mode == .list && state.selected == .provider("corp"))
        #expect(state.message?.text == "Added corp (/p/corp.toml); press Enter to sign in.")
    }
}
