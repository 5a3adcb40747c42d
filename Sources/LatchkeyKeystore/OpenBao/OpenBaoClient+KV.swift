import Foundation
import LatchkeySupport
import LatchkeyVault

/// What a KV version 2 engine holds at one path: the latest version's number and its data, `nil`
/// when that version is deleted or destroyed (its number still counts for check-and-set).
package struct KVSecret: Sendable, Equatable {
    var data: [String: JSONValue]?
    var version: Int
}

extension OpenBaoClient {
    /// The latest version at `path` of the KV version 2 engine at `mount` (`GET
    /// /v1/MOUNT/data/PATH`), or `nil` when the path has never been written.
    /// With `index`, the node that answers has applied the writes it records (`StorageIndex`).
    func read(mount: String, path: String, token: Secret, after index: StorageIndex? = nil) async throws(OpenBaoError) -> KVSecret? {
        let action = "reading \(mount)/data/\(path)"
        let (host, response) = try await send(.get, "\(mount)/data/\(path)", body: nil, token: token, after: index)
        if response.status == 404 {
            // Nothing there: `{"errors": []}`. A deleted latest version: 404 with its metadata.
            let answer = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body))
            if case .object(let object)? = answer, case .object(let data)? = object["data"] {
                return try Self.secret(data, host: host, action: action)
            }
            if case .object(let object)? = answer, object["errors"] == .array([]) { return nil }
        }
        let answer = try Self.answer(response, host: host, action: action)
        guard case .object(let data)? = answer["data"] else {
            throw .malformedAnswer(action: action, host: host, problem: "no data object")
        }
        return try Self.secret(data, host: host, action: action)
    }

    /// Writes `data` as the next version at `path` only if the latest is `version` (`cas`; 0:
    /// only if there is none), and returns the new version's number. A write that lost to
    /// another is `OpenBaoError.versionChanged`. The write's storage index is added to `index`.
    func write(
        _ data: [String: String], mount: String, path: String, replacing version: Int, token: Secret, after index: StorageIndex? = nil
    ) async throws(OpenBaoError) -> Int {
        struct Write: Encodable {
            struct Options: Encodable { let cas: Int }
            let data: [String: String]
            let options: Options
        }
        let action = "writing \(mount)/data/\(path)"
        // Encoding strings and a number cannot fail.
        let body = Array(try! JSONEncoder().encode(Write(data: data, options: .init(cas: version))))
        let (host, response) = try await send(.post, "\(mount)/data/\(path)", body: body, token: token, after: index)
        let answer: [String: JSONValue]
        do {
            answer = try Self.answer(response, host: host, action: action)
        } catch {
            // OpenBao says so in words only, with status 400.
            if case .refused(_, _, 400, let errors) = error,
                errors.contains(where: { $0.contains("check-and-set parameter did not match") })
            {
                throw .versionChanged(path: "\(mount)/\(path)", expected: version)
            }
            throw error
        }
        guard case .object(let written)? = answer["data"], let number = written["version"]?.wholeNumber, number > version else {
            throw .malformedAnswer(action: action, host: host, problem: "no data.version above \(version)")
        }
        index?.record(response)
        return number
    }

    /// The names below `path` (`GET /v1/MOUNT/metadata/PATH?list=true`), folders ending in `/`;
    /// none when nothing was ever written there.
    func list(mount: String, path: String, token: Secret, after index: StorageIndex? = nil) async throws(OpenBaoError) -> [String] {
        let action = "listing \(mount)/metadata/\(path)"
        let (host, response) = try await send(.get, "\(mount)/metadata/\(path)?list=true", body: nil, token: token, after: index)
        if response.status == 404, (try? JSONDecoder().decode(JSONValue.self, from: Data(response.body))) == .object(["errors": .array([])])
        {
            return []
        }
        let answer = try Self.answer(response, host: host, action: action)
        guard case .object(let data)? = answer["data"], case .array(let items)? = data["keys"] else {
            throw .malformedAnswer(action: action, host: host, problem: "no data.keys list")
        }
        return try items.map { item throws(OpenBaoError) in
            guard case .string(let key) = item else {
                throw .malformedAnswer(action: action, host: host, problem: "a key that is not a string")
            }
            return key
        }
    }

    /// `data.data` and `data.metadata.version` of a read.
    private static func secret(_ data: [String: JSONValue], host: String, action: String) throws(OpenBaoError) -> KVSecret {
        guard case .object(let metadata)? = data["metadata"], let version = metadata["version"]?.wholeNumber, version > 0 else {
            throw .malformedAnswer(action: action, host: host, problem: "no data.metadata.version (is the mount KV version 2?)")
        }
        switch data["data"] {
        case .object(let values)?: return KVSecret(data: values, version: version)
        case .null?, nil: return KVSecret(data: nil, version: version)
        default: throw .malformedAnswer(action: action, host: host, problem: "data.data is not an object")
        }
    }
}
