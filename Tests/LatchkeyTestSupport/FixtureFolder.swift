import Foundation

/// Files under `Tests/LatchkeyCoreTests/Fixtures`, copied into the test bundle by SwiftPM.
enum Fixture {
    struct Missing: Error, CustomStringConvertible {
        let path: String
        var description: String { "fixture \(path) is not in the test bundle" }
    }

    static func url(_ relativePath: String) throws -> URL {
        guard let root = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else { throw Missing(path: "Fixtures") }
        let url = root.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: relativePath) }
        return url
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: url(relativePath)))
    }

    static func text(_ relativePath: String) throws -> String {
        String(decoding: try bytes(relativePath), as: UTF8.self)
    }

    /// The repository checkout this test file belongs to (for the shipped `providers.d`).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
