// swift-tools-version: 6.0
import PackageDescription

/// libFuzzer targets for Latchkey's parsers (see README.md here and `scripts/fuzz`).
///
/// A package of its own so the root package's `swift build --build-tests` never compiles them:
/// they link only with `-sanitize=fuzzer`, which provides libFuzzer's driver.

/// Swift 6 settings every target shares (see docs/style.md in the root package).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// One executable per parser, `Sources/fuzz-NAME/main.swift`, with its seeds in `corpus/NAME/`.
let fuzzTargets = [
    "redirect-request", "provider-file", "jwks", "id-token", "token-response", "discovery", "identity-toolkit",
    "plugin-answer", "vault-header", "git-credential", "exec-info", "credential-helper", "sse", "www-authenticate",
    "protected-resource", "json-rpc", "sts-xml", "openbao-answer", "broker-wire",
]

let package = Package(
    name: "LatchkeyFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Latchkey", path: "..")],
    targets: [
        // libFuzzer's entry points, declared for Swift.
        .target(name: "CFuzzerDriver"),
        // Hands control to libFuzzer from an executable's top-level code; fixed providers.
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzerDriver", .product(name: "LatchkeyRooms", package: "Latchkey")],
            swiftSettings: strictSettings
        ),
    ]
        + fuzzTargets.map { name in
            .executableTarget(
                name: "fuzz-\(name)",
                dependencies: [
                    "FuzzSupport",
                    .product(name: "LatchkeyRooms", package: "Latchkey"),
                    .product(name: "LatchkeyVault", package: "Latchkey"),
                    .product(name: "LatchkeyLauncher", package: "Latchkey"),
                    .product(name: "LatchkeyCrypto", package: "Latchkey"),
                ],
                swiftSettings: strictSettings
            )
        }
)
