// swift-tools-version: 6.0
import PackageDescription

/// Swift 6 settings every target shares (see docs/style.md). Release is built with testing enabled, so
/// the suite's one release build with tests also makes the products scripts/try and scripts/install
/// build, flag for flag (docs/decisions/test-suite.md).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .unsafeFlags(["-enable-testing"], .when(configuration: .release)),
]

/// Test code is compiled without optimisation in release too: it is a third of the release build's
/// time at -O, and what ships is still tested as built (the products stay optimised).
let testSettings: [SwiftSetting] = strictSettings + [.unsafeFlags(["-Onone"], .when(configuration: .release))]

/// JOSE signatures, scrypt for the vault key, random bytes: OpenSSL 3's libcrypto, through LatchkeyCrypto.
let crypto: [Target.Dependency] = ["LatchkeyCrypto"]
/// Every room, for the targets above them all (the executables, the screen, the tests).
let rooms: [Target.Dependency] = [
    "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore", "LatchkeySecondFactor",
    "LatchkeyAccounts", "LatchkeyCredentialHelpers", "LatchkeyClouds", "LatchkeyBroker", "LatchkeyMCP", "LatchkeyDoctor",
]
let cryptoAndLoopbackHTTP: [Target.Dependency] = crypto + ["LoopbackHTTP"]

let package = Package(
    name: "Latchkey",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "latchkey", targets: ["latchkey"]),
        .executable(name: "latchkey-cli", targets: ["latchkey-cli"]),
        .library(
            name: "LatchkeyRooms",
            targets: [
                "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore", "LatchkeySecondFactor",
                "LatchkeyAccounts", "LatchkeyCredentialHelpers", "LatchkeyClouds", "LatchkeyBroker", "LatchkeyMCP", "LatchkeyDoctor",
            ]),
        .library(name: "LatchkeyVault", targets: ["LatchkeyVault"]),
        .library(name: "LatchkeyCrypto", targets: ["LatchkeyCrypto"]),
        .library(name: "LatchkeyLauncher", targets: ["LatchkeyLauncher"]),
        .executable(name: "latchkey-emulator", targets: ["latchkey-emulator"]),
        .library(name: "IdentityToolkitEmulator", targets: ["IdentityToolkitEmulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // MARK: - The rooms of the house, bottom up (docs/architecture.md draws the graph)

        // Files, processes, clocks, encodings and the HTTP client (libcurl): what every room uses
        // of the system, and nothing about accounts.
        .target(
            name: "LatchkeySupport",
            dependencies: ["CLatchkeySys", "CLatchkeyCurl", "LatchkeyEssentials", "LatchkeyVault"] + crypto,
            swiftSettings: strictSettings
        ),
        // What a person wrote down: provider files (their parser, catalog and presets) and
        // config.toml. No network, no keystore.
        .target(
            name: "LatchkeyProviders",
            dependencies: [
                "LatchkeySupport", "LatchkeyEssentials", "LatchkeyVault", .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strictSettings
        ),
        // The OAuth 2.0 / OpenID Connect engine: discovery, PKCE, the redirect listener, token,
        // refresh, revocation, DPoP, registration and ID token verification.
        .target(
            name: "LatchkeyOAuth",
            dependencies: ["LatchkeySupport", "LatchkeyProviders", "LatchkeyEssentials", "LatchkeyVault", "LoopbackHTTP"] + crypto,
            swiftSettings: strictSettings
        ),
        // Where account records live: the protocol, the vault, the Secret Service key, the
        // keystore a team shares on an OpenBao cluster (and its client), the launcher's copies.
        .target(
            name: "LatchkeyKeystore",
            dependencies: [
                "CLatchkeySys", "CLatchkeySecret", "LatchkeySupport", "LatchkeyProviders", "LatchkeyEssentials", "LatchkeyVault",
            ]
                + crypto,
            swiftSettings: strictSettings
        ),
        // The second factor modelled on Firebase multi-factor sign-in: Identity Platform's REST
        // backend, the plugin backend, masked hints.
        .target(
            name: "LatchkeySecondFactor",
            dependencies: ["LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyEssentials", "LatchkeyVault"],
            swiftSettings: strictSettings
        ),
        // Accounts: signing in (every kind of flow), refreshing, narrowing and signing out, over
        // the engine and a keystore.
        .target(
            name: "LatchkeyAccounts",
            dependencies: [
                "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore", "LatchkeySecondFactor",
                "LatchkeyBrokerWire", "LatchkeyEssentials", "LatchkeyVault",
            ],
            swiftSettings: strictSettings
        ),
        // What the programs credentials go to speak: git's credential helper, kubectl's exec
        // credential, the container credential helper.
        .target(
            name: "LatchkeyCredentialHelpers",
            dependencies: ["LatchkeySupport", "LatchkeyProviders", "LatchkeyEssentials", "LatchkeyVault"],
            swiftSettings: strictSettings
        ),
        // Cloud credentials from an account's ID token: AWS STS, Google's executable source.
        .target(
            name: "LatchkeyClouds",
            dependencies: [
                "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore", "LatchkeyAccounts", "LatchkeyBrokerWire",
                "LatchkeyEssentials", "LatchkeyVault",
            ],
            swiftSettings: strictSettings
        ),
        // The broker every door asks for a credential, on this machine or through the agent, and
        // the agent that serves it on a socket.
        .target(
            name: "LatchkeyBroker",
            dependencies: [
                "CLatchkeySys", "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore",
                "LatchkeyAccounts", "LatchkeyCredentialHelpers", "LatchkeyClouds", "LatchkeyBrokerWire", "LatchkeyEssentials",
                "LatchkeyVault",
            ],
            swiftSettings: strictSettings
        ),
        // MCP servers: discovery (RFC 9728, RFC 8414), the stdio proxy over Streamable HTTP.
        .target(
            name: "LatchkeyMCP",
            dependencies: [
                "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyBroker", "LatchkeyEssentials", "LatchkeyVault",
            ],
            swiftSettings: strictSettings
        ),
        // `latchkey doctor`: every room's checks, one line each.
        .target(
            name: "LatchkeyDoctor",
            dependencies: [
                "LatchkeySupport", "LatchkeyProviders", "LatchkeyOAuth", "LatchkeyKeystore", "LatchkeyAccounts",
                "LatchkeyBroker", "LatchkeyEssentials", "LatchkeyVault",
            ],
            swiftSettings: strictSettings
        ),
        // Small C wrappers for syscalls Swift cannot call (variadic or macro-only).
        .target(name: "CLatchkeySys"),
        // The desktop Secret Service through libsecret, loaded with dlopen only when chosen.
        .target(name: "CLatchkeySecret"),
        // libcurl's easy interface, loaded with dlopen on the first request: the HTTP client.
        .target(name: "CLatchkeyCurl"),
        // The one HTTP/1.1 server on loopback, on POSIX sockets and a thread per connection: the
        // redirect listener, the emulator and the demo provider serve through it.
        .target(name: "LoopbackHTTP", dependencies: ["CLatchkeySys"], swiftSettings: strictSettings),
        // The primitives every part uses, without Foundation: paths, the kernel keyring, checked
        // files and programs, policy-file fingerprints and the terminal-text sanitiser.
        .target(name: "LatchkeyEssentials", dependencies: ["CLatchkeySys"], swiftSettings: strictSettings),
        // The vault file, its records and how a selector picks one: shared by the full command and
        // the launcher (which reads the vault itself when the keyring holds the key but no token
        // copy), so both answer alike. FoundationEssentials only: no ICU, no OpenSSL (its own
        // SHA-256, HMAC and ChaCha20-Poly1305 in Swift, VaultCrypto.swift says why).
        .target(
            name: "LatchkeyVault",
            dependencies: ["CLatchkeySys", "LatchkeyEssentials"],
            swiftSettings: strictSettings
        ),
        // OpenSSL 3's libcrypto (Debian's libssl-dev), in a few C functions: hashes, HMAC,
        // ChaCha20-Poly1305, scrypt, ECDSA and RSA keys. Initialised without its configuration
        // file. latchkey-cli links libcrypto.so.3; the launcher links none (LatchkeyVault).
        .target(name: "CLatchkeyCrypto", linkerSettings: [.linkedLibrary("crypto")]),
        // The Swift face of CLatchkeyCrypto, with the type names the code used from swift-crypto
        // (SHA256, HMAC, SymmetricKey, ChaChaPoly, P256.Signing, KDF.Scrypt; RSA for _RSA).
        .target(name: "LatchkeyCrypto", dependencies: ["CLatchkeyCrypto"], swiftSettings: strictSettings),
        // The agent's protocol: where its socket is, the messages on it, and the client every
        // door (launcher, full command, screen) talks to it with. The agent itself is LatchkeyAgent.
        .target(
            name: "LatchkeyBrokerWire",
            dependencies: ["CLatchkeySys", "LatchkeyEssentials", "LatchkeyVault"],
            swiftSettings: strictSettings
        ),
        // The launcher's own decisions: which command lines it answers, and from where (the token
        // copy, the vault with the cached key, the agent), else the exec of latchkey-cli. The
        // status report lives here because the launcher prints it too; the full command prints the
        // same type, so both answer alike.
        .target(
            name: "LatchkeyLauncher",
            dependencies: ["CLatchkeySys", "LatchkeyEssentials", "LatchkeyVault", "LatchkeyBrokerWire"],
            swiftSettings: strictSettings
        ),
        // ncursesw, reachable from Swift 6 (see docs/ncurses-from-swift.md).
        .target(name: "CNcursesw", linkerSettings: [.linkedLibrary("ncursesw")]),
        // The full-screen front end: the only module that imports CNcursesw.
        .target(
            name: "LatchkeyTUI",
            dependencies: rooms + ["LatchkeyEssentials", "LatchkeyVault", "LatchkeyBrokerWire", "CNcursesw"],
            swiftSettings: strictSettings
        ),
        // `latchkey`: the token fast path, else exec of latchkey-cli. Only the standard library,
        // linked statically so it starts in well under a millisecond.
        .executableTarget(
            name: "latchkey",
            dependencies: ["LatchkeyEssentials", "LatchkeyVault", "LatchkeyBrokerWire", "LatchkeyLauncher", "CLatchkeySys"],
            swiftSettings: strictSettings + [.unsafeFlags(["-static-executable"])],
            linkerSettings: [.unsafeFlags(["-static-executable"])]
        ),
        // The full command line: parses it and calls the core or the TUI. The Swift runtime and
        // Foundation are linked in (`-static-stdlib`, compiled against the static modules so
        // Foundation's own libraries come along): loading and binding them dynamically cost every
        // command 4 ms. lld packs the relative relocations (RELR, glibc 2.36), so the loader no
        // longer pages in 3 MB of them. libc, ncurses and (dlopen'd) libsecret and libcurl stay shared.
        .executableTarget(
            name: "latchkey-cli",
            dependencies: rooms + [
                "CLatchkeySys",
                "LatchkeyEssentials",
                "LatchkeyVault",
                "LatchkeyBrokerWire",
                "LatchkeyTUI",
                "LatchkeyDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings + [.unsafeFlags(["-static-stdlib"])],
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]
        ),
        // A small OpenID provider for `latchkey demo`, on loopback, sharing only the HTTP server
        // and the token signer with the emulator (none of the client's code).
        .target(
            name: "DemoOpenIDProvider",
            dependencies: ["IdentityToolkitEmulator", "LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        // `latchkey demo` without its screen: both demo providers in process, their files and a
        // throw-away vault in a private directory, the SMS inbox and the demo browser.
        .target(
            name: "LatchkeyDemo",
            dependencies: rooms + ["LatchkeyEssentials", "LatchkeyVault", "DemoOpenIDProvider", "IdentityToolkitEmulator"],
            swiftSettings: strictSettings
        ),
        // Test driver for the vault's crash-safety and locking tests (Tests/e2e/test_vault_durability.py).
        .executableTarget(
            name: "latchkey-vault-stress",
            dependencies: rooms + ["LatchkeyVault", "CLatchkeySys"],
            swiftSettings: strictSettings
        ),
        // A loopback emulator of the Firebase Auth / Identity Platform REST endpoints (second factor).
        .target(
            name: "IdentityToolkitEmulator",
            dependencies: cryptoAndLoopbackHTTP,
            swiftSettings: strictSettings
        ),
        // Thin executable serving the emulator on a loopback port.
        .executableTarget(
            name: "latchkey-emulator",
            dependencies: ["IdentityToolkitEmulator", "CLatchkeySys"],
            swiftSettings: strictSettings
        ),
        // The fakes the tests share: recording transport, fixed clock, in-memory keystore, a
        // scripted person, browser and listener, and an issuer that signs ID tokens.
        .target(
            name: "LatchkeyTestSupport",
            dependencies: rooms + ["LatchkeyVault", "LatchkeyCrypto"],
            path: "Tests/LatchkeyTestSupport",
            swiftSettings: testSettings
        ),
        // One test target per room, named after it, depending on what its files import.
        // The vault file, its records and selection, and the terminal-text sanitiser, as the launcher reads them.
        .testTarget(
            name: "LatchkeyVaultTests",
            dependencies: ["LatchkeyEssentials", "LatchkeyTestSupport", "LatchkeyVault"],
            swiftSettings: testSettings
        ),
        // The launcher's own code (`Sources/latchkey` is only wiring): its modules, tested against
        // the full command's side of each rule (the copy writer, the record's validity).
        .testTarget(
            name: "LatchkeyLauncherTests",
            dependencies: ["LatchkeyDoctor", "LatchkeyEssentials", "LatchkeyKeystore", "LatchkeyLauncher", "LatchkeyVault"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeySupportTests",
            dependencies: ["LatchkeySupport", "LatchkeyTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyProvidersTests",
            dependencies: ["LatchkeyProviders", "LatchkeyTestSupport", "LatchkeyVault"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyOAuthTests",
            dependencies: [
                "LatchkeyCrypto",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyKeystoreTests",
            dependencies: [
                "LatchkeyCrypto",
                "LatchkeyEssentials",
                "LatchkeyKeystore",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeySecondFactorTests",
            dependencies: [
                "IdentityToolkitEmulator",
                "LatchkeyAccounts",
                "LatchkeyKeystore",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySecondFactor",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyAccountsTests",
            dependencies: [
                "LatchkeyAccounts",
                "LatchkeyBrokerWire",
                "LatchkeyCrypto",
                "LatchkeyKeystore",
                "LatchkeyLauncher",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySecondFactor",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyCredentialHelpersTests",
            dependencies: [
                "LatchkeyBrokerWire",
                "LatchkeyCredentialHelpers",
                "LatchkeyLauncher",
                "LatchkeyProviders",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyCloudsTests",
            dependencies: [
                "LatchkeyAccounts",
                "LatchkeyBroker",
                "LatchkeyBrokerWire",
                "LatchkeyClouds",
                "LatchkeyEssentials",
                "LatchkeyLauncher",
                "LatchkeyProviders",
                "LatchkeySecondFactor",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyBrokerTests",
            dependencies: [
                "CLatchkeySys",
                "LatchkeyAccounts",
                "LatchkeyBroker",
                "LatchkeyBrokerWire",
                "LatchkeyCredentialHelpers",
                "LatchkeyEssentials",
                "LatchkeyKeystore",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySecondFactor",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyMCPTests",
            dependencies: [
                "LatchkeyMCP",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyDoctorTests",
            dependencies: [
                "LatchkeyDoctor",
                "LatchkeyKeystore",
                "LatchkeyOAuth",
                "LatchkeyProviders",
                "LatchkeySupport",
                "LatchkeyTestSupport",
                "LatchkeyVault",
            ],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyTUITests",
            dependencies: rooms + ["LatchkeyTUI", "CNcursesw", "LatchkeyVault", "LatchkeyBrokerWire", "LatchkeyTestSupport"],
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "LatchkeyDemoTests",
            dependencies: rooms + [
                "LatchkeyDemo", "DemoOpenIDProvider", "IdentityToolkitEmulator", "LatchkeyVault", "LatchkeyTestSupport",
            ],
            swiftSettings: testSettings
        ),
        // Known-answer tests of every primitive (RFC and FIPS vectors) and sign/verify round trips,
        // LatchkeyCrypto's and the vault's own (VaultCrypto), which is also checked against OpenSSL.
        .testTarget(
            name: "LatchkeyCryptoTests",
            dependencies: ["LatchkeyCrypto", "LatchkeyVault"],
            swiftSettings: testSettings
        ),
    ]
)
