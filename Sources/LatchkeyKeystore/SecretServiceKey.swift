import CLatchkeySecret
import Foundation
import LatchkeyEssentials
import LatchkeySupport
public import LatchkeyVault

/// The `secret-service` keystore's key: a random 256-bit secret kept by the desktop Secret
/// Service (GNOME Keyring, KWallet, KeePassXC) instead of a passphrase.
///
/// The records still live in a vault file, so large tokens, crash safety and locking are the
/// same as the default keystore's; only the key moves to the desktop keyring. With no Secret
/// Service running, every operation fails with a message saying how to fix it: there is no
/// silent fallback to anything weaker.
public struct SecretServiceKey: PassphraseProvider {
    public init() {}

    public func passphrase(forVault path: String, creating: Bool) throws(KeystoreError) -> Secret {
        if let problem = Self.libraryProblem { throw Self.failure(problem) }
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        let status = lk_secret_lookup(path, &secret, &error)
        defer { lk_secret_free(secret) }
        switch status {
        case 0:
            return Secret(String(cString: secret!))
        case 1 where creating:
            let fresh = SecureRandom.token(byteCount: 32)
            guard lk_secret_store(path, "Latchkey vault key (\(path))", fresh, &error) == 0 else { throw Self.failure(Self.taken(error)) }
            return Secret(fresh)
        case 1:
            throw .locked(
                "the Secret Service holds no key for \(path) (was the desktop keyring reset?); move the file aside to start a new vault")
        default:
            throw Self.failure(Self.taken(error))
        }
    }

    /// Whether the Secret Service answers, and whether it holds the key of the vault at `path`.
    public enum Availability: Sendable, Equatable {
        case holdsKey
        case noKey
        /// Not reachable; the reason says what to start or change.
        case unusable(String)
    }

    /// Asks the Secret Service for the vault's key and drops it at once (`latchkey doctor`).
    public func availability(forVault path: String) -> Availability {
        if let problem = Self.libraryProblem { return .unusable(Self.failure(problem).description) }
        var secret: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<CChar>?
        let status = lk_secret_lookup(path, &secret, &error)
        lk_secret_free(secret)
        switch status {
        case 0: return .holdsKey
        case 1: return .noKey
        default: return .unusable(Self.failure(Self.taken(error)).description)
        }
    }

    /// Deletes the key (after the vault it protects was removed).
    public func forget(vault path: String) {
        guard Self.libraryProblem == nil else { return }
        var error: UnsafeMutablePointer<CChar>?
        _ = lk_secret_clear(path, &error)
        free(error)
    }

    /// libsecret, loaded once per process (a static is initialised exactly once) by absolute path
    /// from the system's library directories (`SystemLibrary`); `nil` once loaded, else why not.
    private static let libraryProblem: String? = {
        let path: String
        do throws(SystemLibrary.Failure) {
            path = try SystemLibrary.locate(["libsecret-1.so.0"])
        } catch .missing {
            return "libsecret is not installed (Debian: apt install libsecret-1-0)"
        } catch {
            return error.description
        }
        var error: UnsafeMutablePointer<CChar>?
        return lk_secret_load(path, &error) == 1 ? nil : taken(error)
    }()

    /// The message a C function returned, freed.
    private static func taken(_ error: UnsafeMutablePointer<CChar>?) -> String {
        defer { free(error) }
        return error.map { String(cString: $0) } ?? "unknown error"
    }

    private static func failure(_ reason: String) -> KeystoreError {
        return .locked(
            "the desktop Secret Service is not usable (\(TerminalText.sanitized(reason, maxLength: 300))). Start one (gnome-keyring-daemon, "
                + "KeePassXC or KWallet) in this session, or set keystore = \"vault\" in config.toml to use a passphrase")
    }
}
