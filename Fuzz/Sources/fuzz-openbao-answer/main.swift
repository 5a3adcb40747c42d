// OpenBao's answers as the openbao keystore reads them (LatchkeyKeystore/OpenBao/): a login's
// `auth.client_token`, a KV version 2 read, list and check-and-set write
// (OpenBaoClient+KV.swift), a refusal's `errors`, and what a read holds: an account's record, the
// registered clients, a lease's holder. The first byte picks the status, the rest is the body;
// every request is answered with it. A read version is positive, a write's is above the one
// replaced, and a lease held has a deadline a person can be told.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyProviders
internal import LatchkeySupport

@testable internal import LatchkeyKeystore
@testable internal import LatchkeyVault

enum Fixed {
    static let statuses = [200, 404, 400, 403, 500, 503, 307, 204]
    static let settings = OpenBaoSettings(addresses: [URL(string: "https://bao.test.example:8200")!], path: "team")
    static let token = Secret("s.fuzztoken")
}

/// What the keystore makes of `response` as each of its requests' answer, checked.
func readAll(_ response: HTTPResponse) async {
    let keystore = OpenBaoKeystore(
        settings: Fixed.settings, transport: FixedAnswer(response), environment: [:], journalPath: "/nonexistent/latchkey-fuzz-journal",
        now: { Date(timeIntervalSince1970: 1_750_000_000) }, pause: { _ in })
    let client = keystore.client
    do {
        let token = try await client.login(roleID: "runner", secretID: Secret("secret-id"), mount: "approle")
        precondition(!token.exposedValue.isEmpty, "an empty client token was taken")
    } catch {
        _ = (error.description, error.category)
    }
    do {
        let secret = try await client.read(mount: "secret", path: "team/accounts/a", token: Fixed.token)
        precondition(secret.map { $0.version > 0 } ?? true, "a read of version 0 or less")
        if let holder = try keystore.holder(of: secret, at: keystore.leasePath) {
            precondition(!holder.owner.isEmpty, "a lease held by nobody")
            _ = OpenBaoError.leaseHeld(path: keystore.leasePath, owner: holder.owner, until: holder.deadline, waited: 90).description
        }
    } catch {
        _ = String(describing: error)
    }
    do {
        _ = try await keystore.readAccount("a", token: Fixed.token)
    } catch {
        _ = String(describing: error)
    }
    do {
        _ = try await keystore.readClients(Fixed.token)
    } catch {
        _ = String(describing: error)
    }
    do {
        _ = try await client.list(mount: "secret", path: "team/accounts", token: Fixed.token)
    } catch {
        _ = (error.description, error.category)
    }
    do {
        let version = try await client.write(["latchkey": "lease"], mount: "secret", path: "team/lease", replacing: 3, token: Fixed.token)
        precondition(version > 3, "a write that made no newer version")
    } catch {
        _ = (error.description, error.category)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let response = HTTPResponse(
        status: Fixed.statuses[Int(control) % Fixed.statuses.count], headers: [("Content-Type", "application/json")],
        body: Array(input.dropFirst()))
    _ = OpenBaoClient.isUpgrading(response)
    do {
        _ = try OpenBaoClient.answer(response, host: "bao.test.example:8200", action: "fuzzing")
    } catch {
        _ = error.description
    }
    waitFor { await readAll(response) }
    return 0
}

runFuzzer(testOneInput)
