public import Foundation
import LatchkeyCrypto
import LatchkeyEssentials
import LatchkeySupport
import Synchronization

/// What servers said that is worth keeping from one run to the next, none of it secret: each
/// issuer's discovery document, so that a refresh (inside the vault's lock) does not fetch one
/// first, and the last DPoP nonce each token endpoint gave (RFC 9449 §8), so that a server that
/// demands nonces costs one round trip, not two. A memory that cannot be read or written is
/// simply empty: every fact in it can be asked for again.
public protocol ServerMemory: Sendable {
    /// The document fetched from `url` less than `DiscoveryDocument.keptFor` before `now`.
    func discovery(at url: URL, now: Date) -> [UInt8]?
    func remember(discovery: [UInt8], at url: URL, now: Date)
    /// Drops the document from `url`: one of the endpoints it named failed.
    func forget(discoveryAt url: URL)
    func nonce(for endpoint: URL) -> String?
    func remember(nonce: String, for endpoint: URL)
}

extension DiscoveryDocument {
    /// How long a discovery document is used without being fetched again: a day, so that moved
    /// endpoints are found by the next day at the latest, and at once when one of them fails.
    public static let keptFor: TimeInterval = 86_400
}

/// A `ServerMemory` for one process (tests, the demo, a memory whose directory is unusable).
public final class ProcessServerMemory: ServerMemory {
    private let state = Mutex<(documents: [URL: (bytes: [UInt8], at: Date)], nonces: [String: String])>(([:], [:]))

    public init() {}

    public func discovery(at url: URL, now: Date) -> [UInt8]? {
        state.withLock { state in
            state.documents[url].flatMap { now.timeIntervalSince($0.at) < DiscoveryDocument.keptFor ? $0.bytes : nil }
        }
    }

    public func remember(discovery: [UInt8], at url: URL, now: Date) { state.withLock { $0.documents[url] = (discovery, now) } }
    public func forget(discoveryAt url: URL) { state.withLock { _ = $0.documents.removeValue(forKey: url) } }
    public func nonce(for endpoint: URL) -> String? { state.withLock { $0.nonces[EndpointURL.origin(of: endpoint)] } }
    public func remember(nonce: String, for endpoint: URL) { state.withLock { $0.nonces[EndpointURL.origin(of: endpoint)] = nonce } }
}

/// The `ServerMemory` kept in `$XDG_CACHE_HOME/latchkey/servers` (0700), one 0600 file per
/// discovery URL or token endpoint origin, named by its SHA-256. Read with the vault's own
/// checks (`VaultFile.read`): a file another user could have written would steer token requests.
public struct ServerMemoryDirectory: ServerMemory {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// `$XDG_CACHE_HOME/latchkey/servers` (default `~/.cache/latchkey/servers`).
    public init(environment: [String: String]) {
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "/") + "/.cache"
        self.init(directory: base + "/latchkey/servers")
    }

    /// A discovery document is at most the transport's response limit; a nonce is short.
    static let largestEntry = LiveHTTPTransport.responseLimit + 4096

    struct Entry: Codable {
        var url: String
        var at: Date?
        var text: String
    }

    public func discovery(at url: URL, now: Date) -> [UInt8]? {
        guard let entry = read(key: "discovery " + url.absoluteString), entry.url == url.absoluteString, let at = entry.at,
            now.timeIntervalSince(at) < DiscoveryDocument.keptFor, now >= at
        else { return nil }
        return Array(entry.text.utf8)
    }

    public func remember(discovery: [UInt8], at url: URL, now: Date) {
        guard let text = String(validating: discovery, as: UTF8.self) else { return }
        write(Entry(url: url.absoluteString, at: now, text: text), key: "discovery " + url.absoluteString)
    }

    public func forget(discoveryAt url: URL) { unlink(path(key: "discovery " + url.absoluteString)) }

    public func nonce(for endpoint: URL) -> String? {
        let origin = EndpointURL.origin(of: endpoint)
        guard let entry = read(key: "nonce " + origin), entry.url == origin else { return nil }
        return entry.text
    }

    public func remember(nonce: String, for endpoint: URL) {
        let origin = EndpointURL.origin(of: endpoint)
        write(Entry(url: origin, at: nil, text: nonce), key: "nonce " + origin)
    }

    private func path(key: String) -> String {
        directory + "/" + SHA256.hash(data: Array(key.utf8)).hexadecimal
    }

    private func read(key: String) -> Entry? {
        guard case .success(let bytes?) = VaultFile.read(path(key: key), largestSize: Self.largestEntry) else { return nil }
        return try? JSONDecoder().decode(Entry.self, from: Data(bytes))
    }

    private func write(_ entry: Entry, key: String) {
        guard let bytes = try? JSONEncoder().encode(entry) else { return }
        do {
            if VaultFile.directoryProblem(directory) != nil { return }
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try AtomicFile.replace(path(key: key), with: Array(bytes))
        } catch {
            // Not kept: the fact is asked for again next time.
        }
    }
}
