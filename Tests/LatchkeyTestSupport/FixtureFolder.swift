public import Foundation

/// A test target's `Fixtures` folder, as SwiftPM copies it into that target's bundle: each target
/// with fixtures says `let fixtures = FixtureFolder(bundle: .module)` once.
public struct FixtureFolder: Sendable {
    public struct Missing: Error, CustomStringConvertible {
        let path: String
        public var description: String { "fixture \(path) is not in the test bundle" }
    }

    private let root: URL?

    public init(bundle: Bundle) {
        root = bundle.url(forResource: "Fixtures", withExtension: nil)
    }

    public func url(_ relativePath: String) throws -> URL {
        guard let root else { throw Missing(path: "Fixtures") }
        let url = root.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: relativePath) }
        return url
    }

    public func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(relativePath)))
    }

    public func text(_ relativePath: String) throws -> String {
        String(decoding: try bytes(relativePath), as: UTF8.self)
    }

    /// The repository checkout the tests belong to (for the shipped `providers.d`, the examples).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
