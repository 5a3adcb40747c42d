import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyProviders
@testable import LatchkeyVault

@Suite("Provider presets (share/latchkey/providers.d)")
struct ProviderPresetsTests {
    static let preset = """
        # Example - OpenID Connect. Register a client, then set client_id.
        display_name = "Example"
        kind = "oidc"
        issuer = "https://example.com"
        client_id = ""

        """

    @Test("the user's data directory comes first, then the running install's share directory, then XDG_DATA_DIRS")
    func searchOrder() {
        let directories = ProviderPresets.searchDirectories(
            environment: ["HOME": "/home/a", "XDG_DATA_DIRS": "/usr/share:relative:/opt/share"],
            executablePath: "/opt/latchkey/libexec/latchkey/latchkey-cli")
        #expect(
            directories == [
                "/home/a/.local/share/latchkey/providers.d", "/opt/latchkey/share/latchkey/providers.d",
                "/usr/share/latchkey/providers.d", "/opt/share/latchkey/providers.d",
            ])
    }

    @Test("without XDG_DATA_DIRS, /usr/local/share and /usr/share are searched, and an install there is named once")
    func defaultSystemDirectories() {
        let directories = ProviderPresets.searchDirectories(
            environment: ["HOME": "/home/a", "XDG_DATA_HOME": "/data"], executablePath: "/usr/local/libexec/latchkey/latchkey-cli")
        #expect(
            directories == ["/data/latchkey/providers.d", "/usr/local/share/latchkey/providers.d", "/usr/share/latchkey/providers.d"])
    }

    @Test("a build directory is no install: only PREFIX/bin and PREFIX/libexec/latchkey give a prefix")
    func installPrefix() {
        #expect(ProviderPresets.installPrefix(executablePath: "/usr/libexec/latchkey/latchkey-cli") == "/usr")
        #expect(ProviderPresets.installPrefix(executablePath: "/home/a/.local/bin/latchkey-cli") == "/home/a/.local")
        #expect(ProviderPresets.installPrefix(executablePath: "/src/latchkey/.build/debug/latchkey-cli") == nil)
    }

    @Test("a preset in an earlier directory hides the same name in a later one; other files are not presets")
    func firstDirectoryWins() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let mine = try root.write("home/example.toml", Self.preset)
        try root.write("system/example.toml", Self.preset.replacingOccurrences(of: "Example", with: "System"))
        let other = try root.write("system/other.toml", "display_name = [\n")
        try root.write("system/README", "not a preset")

        let presets = ProviderPresets(directories: [root.path + "/home", root.path + "/system", root.path + "/absent"]).presets
        #expect(
            presets == [
                .init(name: "example", file: mine, displayName: "Example", issuer: "https://example.com"),
                .init(name: "other", file: other, displayName: nil),
            ])
    }

    @Test("adding a preset copies it with client_id filled in, mode 0600, into a directory it creates")
    func addFillsInClientID() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try root.write("presets/example.toml", Self.preset)
        let presets = ProviderPresets(directories: [root.path + "/presets"])

        let file = try presets.add("example", clientID: #"abc"\.apps"#, into: root.path + "/config/providers.d")
        #expect(file == root.path + "/config/providers.d/example.toml")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text == Self.preset.replacingOccurrences(of: #"client_id = """#, with: #"client_id = "abc\"\\.apps""#))
        let provider = try ProviderFileParser().parse(text, file: file).get()
        #expect(provider.asOAuth.clientID == #"abc"\.apps"#)
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("without --client-id the copy is the preset byte for byte")
    func addWithoutClientID() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try root.write("presets/example.toml", Self.preset)
        let file = try ProviderPresets(directories: [root.path + "/presets"]).add("example", clientID: nil, into: root.path + "/mine")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == Self.preset)
    }

    @Test("an existing provider file is never replaced, and an unknown preset names those there are")
    func addRefusals() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try root.write("presets/example.toml", Self.preset)
        let existing = try root.write("mine/example.toml", "# my own edits\n")
        let presets = ProviderPresets(directories: [root.path + "/presets"])

        #expect(throws: ProviderPresetError.exists(file: existing)) {
            try presets.add("example", clientID: "id", into: root.path + "/mine")
        }
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "# my own edits\n")
        #expect(ProviderPresetError.exists(file: existing).category == .cannotCreate)

        #expect(throws: ProviderPresetError.unknown(name: "nope", known: ["example"], directories: [root.path + "/presets"])) {
            try presets.add("nope", clientID: nil, into: root.path + "/mine")
        }
    }

    @Test("a client ID is written only over an empty client_id line, and never with control characters")
    func clientIDChecks() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let set = try root.write("presets/set.toml", Self.preset.replacingOccurrences(of: #"client_id = """#, with: #"client_id = "x""#))
        try root.write("presets/example.toml", Self.preset)
        let presets = ProviderPresets(directories: [root.path + "/presets"])
        let mine = root.path + "/mine"

        #expect(throws: ProviderPresetError.clientIDNotEmpty(file: set)) { try presets.add("set", clientID: "id", into: mine) }
        #expect(throws: ProviderPresetError.invalidClientID) { try presets.add("example", clientID: "a\nb", into: mine) }
        #expect(throws: ProviderPresetError.invalidClientID) { try presets.add("example", clientID: "", into: mine) }
        #expect(!FileManager.default.fileExists(atPath: mine))
    }

    @Test("a file that would not load is not written: an issuer that is no URL, a redirect path another provider uses")
    func invalidDraftsAreNotWritten() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try root.write("presets/example.toml", Self.preset + "redirect_path = \"/oauth2redirect/example\"\n")
        let presets = ProviderPresets(directories: [root.path + "/presets"])
        let mine = root.path + "/mine"

        guard
            case .invalid(let errors)? = Self.error({
                try presets.write(.init(preset: "example", name: "ex", issuer: "not a url"), into: mine)
            })
        else {
            Issue.record("an issuer that is no URL was accepted")
            return
        }
        #expect(errors.map { $0.field } == ["issuer"])
        #expect(!FileManager.default.fileExists(atPath: mine + "/ex.toml"))

        try root.write(
            "mine/other.toml",
            "display_name = \"O\"\nkind = \"oidc\"\nissuer = \"https://o.example\"\nredirect_path = \"/oauth2redirect/taken\"\n")
        try root.write("presets/taken.toml", Self.preset + "redirect_path = \"/oauth2redirect/taken\"\n")
        let clash = Self.error {
            try ProviderPresets(directories: [root.path + "/presets"]).write(
                .init(preset: "taken", name: "taken"), into: mine, alongside: [mine])
        }
        guard case .invalid(let clashes)? = clash else {
            Issue.record("a shared redirect path was accepted: \(String(describing: clash))")
            return
        }
        #expect(clashes.first?.field == "redirect_path")
        #expect(!FileManager.default.fileExists(atPath: mine + "/taken.toml"))
    }

    @Test("a second copy of a preset gets its own name, redirect path and issuer; a provider by issuer needs no preset")
    func secondCopyAndBlank() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        try root.write("presets/example.toml", Self.preset + "redirect_path = \"/oauth2redirect/example\"\n")
        let presets = ProviderPresets(directories: [root.path + "/presets"])
        let mine = root.path + "/mine"
        _ = try presets.add("example", clientID: "one", into: mine)
        let second = try presets.write(
            .init(preset: "example", name: "example-work", issuer: "https://work.example.com", clientID: "two"), into: mine,
            alongside: [mine])
        let provider = try ProviderFileParser().parse(try String(contentsOfFile: second, encoding: .utf8), file: second).get().asOAuth
        #expect(
            provider.redirectPath == "/oauth2redirect/example-work" && provider.issuer == "https://work.example.com"
                && provider.clientID == "two")

        let blank = try presets.write(
            .init(preset: nil, name: "corp", issuer: "https://idp.corp.example", clientID: "c"), into: mine, alongside: [mine])
        let corp = try ProviderFileParser().parse(try String(contentsOfFile: blank, encoding: .utf8), file: blank).get()
        #expect(corp.kindName == "oidc" && corp.issuer == "https://idp.corp.example")
        #expect(Self.error { try presets.write(.init(preset: nil, name: "none"), into: mine) } == .issuerNeeded)
        #expect(Self.error { try presets.write(.init(preset: "example", name: "../escape"), into: mine) } == .invalidName("../escape"))
    }

    /// The preset error `body` throws, `nil` when it throws none.
    static func error(_ body: () throws -> String) -> ProviderPresetError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? ProviderPresetError
        }
    }

    @Test("every preset shipped in providers.d parses")
    func shippedPresets() {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../providers.d").path
        let presets = ProviderPresets(directories: [directory]).presets
        #expect(presets.count >= 7)
        for preset in presets { #expect(preset.displayName != nil, "\(preset.file) does not parse") }
    }
}
