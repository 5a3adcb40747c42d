public import Foundation
public import LatchkeySupport
public import LatchkeyVault

/// A device authorization response (RFC 8628 §3.2): what the person must type, and where.
public struct DeviceAuthorization: Sendable {
    /// `device_code`: polled with, never shown.
    public var deviceCode: Secret
    /// `user_code`: shown in large type.
    public var userCode: String
    /// `verification_uri`
    public var verificationURI: String
    /// `verification_uri_complete`: the URI with the code filled in, for a QR code or a click.
    public var verificationURIComplete: String?
    /// `expires_in`, seconds.
    public var expiresIn: Int
    /// `interval`, seconds between polls (default 5).
    public var interval: Int

    public static func parse(_ response: HTTPResponse) throws(TokenEndpointError) -> DeviceAuthorization {
        let endpoint = "device authorization endpoint"
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(response.body)) else {
            throw .malformed(endpoint: endpoint, reason: "the body is not a JSON object (HTTP \(response.status))")
        }
        if let error = OAuthErrorResponse(body: response.body) { throw .oauth(endpoint: endpoint, error) }
        guard response.status == 200 else { throw .malformed(endpoint: endpoint, reason: "HTTP \(response.status)") }
        guard let deviceCode = wire.deviceCode, let userCode = wire.userCode, let verificationURI = wire.verificationURI
        else { throw .malformed(endpoint: endpoint, reason: "device_code, user_code or verification_uri is missing") }
        guard case .success = EndpointURL.validate(verificationURI) else {
            throw .malformed(endpoint: endpoint, reason: "verification_uri is not an https URL")
        }
        let complete = wire.verificationURIComplete
        let expiresIn = wire.expiresIn ?? 600
        let interval = wire.interval ?? 5
        return DeviceAuthorization(
            deviceCode: Secret(deviceCode), userCode: userCode, verificationURI: verificationURI,
            verificationURIComplete: complete.flatMap { if case .success = EndpointURL.validate($0) { $0 } else { nil } },
            expiresIn: max(1, min(expiresIn, 3600)), interval: max(1, min(interval, 60)))
    }
}

extension DeviceAuthorization {
    /// The §3.2 members as they arrive, read forgivingly: a required member of another type counts
    /// as missing, and an `expires_in` or `interval` that is not a whole number (a string, a
    /// boolean, a fraction) falls back to its default.
    struct Wire: Decodable {
        var deviceCode: String?
        var userCode: String?
        /// `verification_uri`, or `verification_url` as Google's device endpoint names it.
        var verificationURI: String?
        var verificationURIComplete: String?
        var expiresIn: Int?
        var interval: Int?

        enum CodingKeys: String, CodingKey {
            case deviceCode = "device_code"
            case userCode = "user_code"
            case verificationURI = "verification_uri"
            case verificationURL = "verification_url"
            case verificationURIComplete = "verification_uri_complete"
            case expiresIn = "expires_in"
            case interval
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            deviceCode = container.lenient(forKey: .deviceCode)
            userCode = container.lenient(forKey: .userCode)
            verificationURI = container.lenient(forKey: .verificationURI) ?? container.lenient(forKey: .verificationURL)
            verificationURIComplete = container.lenient(forKey: .verificationURIComplete)
            expiresIn = container.lenient(WireLifetime.self, forKey: .expiresIn)?.seconds
            interval = container.lenient(WireLifetime.self, forKey: .interval)?.seconds
        }
    }
}

/// The polling half of the device grant (RFC 8628 §3.4–3.5) as a pure state machine.
public struct DevicePoller: Sendable {
    public enum Action: Sendable {
        /// Wait this many seconds, then poll again.
        case wait(seconds: Int)
        /// The person approved: here are the tokens.
        case finished(TokenResponse)
        /// Stop: denied, expired, or a real error.
        case failed(DeviceFlowError)
    }

    public private(set) var interval: Int
    private let deadline: Date

    public init(authorization: DeviceAuthorization, startedAt: Date) {
        interval = authorization.interval
        deadline = startedAt.addingTimeInterval(TimeInterval(authorization.expiresIn))
    }

    /// What to do after a poll came back with `result` at `now`.
    public mutating func handle(_ result: Result<TokenResponse, TokenEndpointError>, now: Date) -> Action {
        switch result {
        case .success(let tokens):
            return .finished(tokens)
        case .failure(.oauth(_, let error)):
            switch error.error {
            case "authorization_pending": break
            case "slow_down": interval += 5
            case "access_denied": return .failed(.denied)
            case "expired_token": return .failed(.expired)
            default: return .failed(.server(error))
            }
        case .failure(let other):
            return .failed(.transport(other.description))
        }
        return waitOrExpire(now: now, expired: .expired)
    }

    /// A poll that never reached the provider (network down, time-out): not the person's answer,
    /// so polling goes on, but only until the user code expires.
    public mutating func unreachable(_ reason: String, now: Date) -> Action {
        waitOrExpire(now: now, expired: .unreachable(reason))
    }

    private func waitOrExpire(now: Date, expired: DeviceFlowError) -> Action {
        if now.addingTimeInterval(TimeInterval(interval)) >= deadline { return .failed(expired) }
        return .wait(seconds: interval)
    }
}

public enum DeviceFlowError: LatchkeyError, Equatable {
    case denied
    case expired
    case server(OAuthErrorResponse)
    case transport(String)
    /// The token endpoint could not be reached until the user code expired.
    case unreachable(String)
    case unsupported(provider: String)

    public var category: FailureCategory {
        switch self {
        case .denied, .expired, .unreachable: return .unavailable
        case .server, .transport: return .rejected
        case .unsupported: return .configuration
        }
    }

    public var description: String {
        switch self {
        case .denied: return "the sign-in was denied in the browser"
        case .expired: return "the user code expired before the sign-in was approved; run the command again"
        case .server(let error): return "the provider stopped the device sign-in: \(error)"
        case .transport(let reason): return reason
        case .unreachable(let reason):
            return "the provider could not be reached until the user code expired (\(reason)); check the network and run the command again"
        case .unsupported(let provider):
            return "\(provider) has no device_authorization_endpoint (in discovery or its file); use the browser or --paste"
        }
    }
}
