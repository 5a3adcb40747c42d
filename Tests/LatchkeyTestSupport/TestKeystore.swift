public import Foundation
public import LatchkeyKeystore
public import LatchkeySupport
public import LatchkeyVault

/// A keystore written for one test: it has no launcher window and tells `latchkey doctor`
/// nothing, which a test double of records alone needs no more than.
public protocol TestKeystore: Keystore {}

extension TestKeystore {
    public var location: String { backendName }
    public var freshness: RecordsFreshness { .forSeconds(0) }
    public var launcherWindow: LauncherWindow { .none(reason: "a test keystore has no launcher") }

    public func unlock(for duration: TimeInterval) async throws -> Date {
        throw KeystoreError.noLauncherWindow("a test keystore has no launcher")
    }

    @discardableResult
    public func lock() -> Bool { false }

    public func keepAnswerForLauncher(_ text: [UInt8], key: (_ location: String) -> String, of record: AccountRecord, until: Date) {}

    public func findings(environment: [String: String]) -> [Finding] { [] }
}
