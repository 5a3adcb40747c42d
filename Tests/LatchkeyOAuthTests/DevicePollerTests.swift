import Foundation
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Device authorization polling (RFC 8628 §3.4–3.5)")
struct DevicePollerTests {
    static let start = Date(timeIntervalSince1970: 1_750_000_000)

    static func authorization(expiresIn: Int = 600, interval: Int = 5) -> DeviceAuthorization {
        DeviceAuthorization(
            deviceCode: Secret("fake-device-code"), userCode: "WDJB-MJHT", verificationURI: "https://idp.example.com/device",
            verificationURIComplete: nil, expiresIn: expiresIn, interval: interval)
    }

    static func oauthError(_ code: String) -> Result<TokenResponse, TokenEndpointError> {
        .failure(.oauth(endpoint: "token endpoint", OAuthErrorResponse(error: code)))
    }

    static let tokens = TokenResponse(
        accessToken: Secret("fake-access"), tokenType: "Bearer", expiresIn: 3600, refreshToken: nil, scope: nil, idToken: nil)

    static func waited(_ action: DevicePoller.Action) -> Int? {
        if case .wait(let seconds) = action { return seconds }
        return nil
    }

    static func failure(_ action: DevicePoller.Action) -> DeviceFlowError? {
        if case .failed(let error) = action { return error }
        return nil
    }

    @Test("an unreachable token endpoint is polled again, but only until the user code expires")
    func unreachableUntilExpiry() {
        var poller = DevicePoller(authorization: Self.authorization(expiresIn: 12, interval: 5), startedAt: Self.start)
        #expect(Self.waited(poller.unreachable("connection refused", now: Self.start.addingTimeInterval(5))) == 5)
        #expect(
            Self.failure(poller.unreachable("connection refused", now: Self.start.addingTimeInterval(10)))
                == .unreachable("connection refused"))
    }

    @Test("authorization_pending waits the interval and polls again")
    func pending() {
        var poller = DevicePoller(authorization: Self.authorization(interval: 5), startedAt: Self.start)
        #expect(Self.waited(poller.handle(Self.oauthError("authorization_pending"), now: Self.start)) == 5)
        #expect(Self.waited(poller.handle(Self.oauthError("authorization_pending"), now: Self.start.addingTimeInterval(5))) == 5)
    }

    @Test("slow_down adds 5 seconds to the interval for every later poll")
    func slowDown() {
        var poller = DevicePoller(authorization: Self.authorization(interval: 5), startedAt: Self.start)
        #expect(Self.waited(poller.handle(Self.oauthError("slow_down"), now: Self.start)) == 10)
        #expect(Self.waited(poller.handle(Self.oauthError("authorization_pending"), now: Self.start.addingTimeInterval(10))) == 10)
        #expect(Self.waited(poller.handle(Self.oauthError("slow_down"), now: Self.start.addingTimeInterval(20))) == 15)
        #expect(poller.interval == 15)
    }

    @Test("access_denied stops polling as denied")
    func denied() {
        var poller = DevicePoller(authorization: Self.authorization(), startedAt: Self.start)
        #expect(Self.failure(poller.handle(Self.oauthError("access_denied"), now: Self.start)) == .denied)
    }

    @Test("expired_token stops polling as expired")
    func expiredToken() {
        var poller = DevicePoller(authorization: Self.authorization(), startedAt: Self.start)
        #expect(Self.failure(poller.handle(Self.oauthError("expired_token"), now: Self.start)) == .expired)
    }

    @Test("polling stops as expired when the next poll would fall after the user code expires")
    func deadline() {
        var poller = DevicePoller(authorization: Self.authorization(expiresIn: 30, interval: 5), startedAt: Self.start)
        #expect(Self.waited(poller.handle(Self.oauthError("authorization_pending"), now: Self.start.addingTimeInterval(24))) == 5)
        #expect(Self.failure(poller.handle(Self.oauthError("authorization_pending"), now: Self.start.addingTimeInterval(26))) == .expired)
    }

    @Test("a success finishes with the tokens")
    func finished() {
        var poller = DevicePoller(authorization: Self.authorization(), startedAt: Self.start)
        guard case .finished(let response) = poller.handle(.success(Self.tokens), now: Self.start.addingTimeInterval(15)) else {
            Issue.record("a successful poll did not finish")
            return
        }
        #expect(response.accessToken.exposedValue == "fake-access")
    }

    @Test("an unknown OAuth error stops polling and keeps the server's error")
    func otherError() {
        var poller = DevicePoller(authorization: Self.authorization(), startedAt: Self.start)
        #expect(
            Self.failure(poller.handle(Self.oauthError("invalid_client"), now: Self.start))
                == .server(OAuthErrorResponse(error: "invalid_client")))
    }

    @Test("a malformed token endpoint answer stops polling")
    func malformedAnswer() {
        var poller = DevicePoller(authorization: Self.authorization(), startedAt: Self.start)
        let action = poller.handle(
            .failure(.malformed(endpoint: "token endpoint", reason: "the body is not JSON (HTTP 502)")), now: Self.start)
        guard case .transport(let reason)? = Self.failure(action) else {
            Issue.record("expected a transport failure")
            return
        }
        #expect(reason.contains("HTTP 502"))
    }

    // MARK: - The device authorization response

    static func parse(_ json: String, status: Int = 200) throws(TokenEndpointError) -> DeviceAuthorization {
        try DeviceAuthorization.parse(HTTPResponse(status: status, body: Array(json.utf8)))
    }

    @Test("a device authorization response is read with its interval and expiry")
    func parseResponse() throws {
        let authorization = try Self.parse(
            #"{"device_code":"fake-dc","user_code":"WDJB-MJHT","verification_uri":"https://idp.example.com/device","verification_uri_complete":"https://idp.example.com/device?user_code=WDJB-MJHT","expires_in":1800,"interval":7}"#
        )
        #expect(authorization.deviceCode.exposedValue == "fake-dc")
        #expect(authorization.userCode == "WDJB-MJHT")
        #expect(authorization.verificationURIComplete == "https://idp.example.com/device?user_code=WDJB-MJHT")
        #expect(authorization.expiresIn == 1800)
        #expect(authorization.interval == 7)
    }

    @Test("the interval defaults to 5 seconds (RFC 8628 §3.2)")
    func defaultInterval() throws {
        let authorization = try Self.parse(
            #"{"device_code":"d","user_code":"u","verification_uri":"https://idp.example.com/device","expires_in":600}"#)
        #expect(authorization.interval == 5)
    }

    @Test("verification_url (Google's spelling) is accepted as verification_uri")
    func verificationURLAlias() throws {
        let authorization = try Self.parse(
            #"{"device_code":"d","user_code":"u","verification_url":"https://www.google.com/device","expires_in":1800,"interval":5}"#)
        #expect(authorization.verificationURI == "https://www.google.com/device")
    }

    @Test(
        "expires_in and interval that are no lifetime (WireLifetime) fall back to 600 and 5 seconds",
        arguments: ["true", #""30s""#, "7.5", "-3", "null", "[7]"])
    func numbersFallBack(value: String) throws {
        let authorization = try Self.parse(
            #"{"device_code":"d","user_code":"u","verification_uri":"https://idp.example.com/device","expires_in":"#
                + value + #","interval":"# + value + "}")
        #expect(authorization.expiresIn == 600)
        #expect(authorization.interval == 5)
    }

    @Test("expires_in and interval of 1 are numbers, and out-of-range values are clamped")
    func numbersClamped() throws {
        let one = try Self.parse(
            #"{"device_code":"d","user_code":"u","verification_uri":"https://idp.example.com/device","expires_in":1,"interval":1}"#)
        #expect(one.expiresIn == 1 && one.interval == 1)
        let large = try Self.parse(
            #"{"device_code":"d","user_code":"u","verification_uri":"https://idp.example.com/device","expires_in":99999,"interval":600}"#)
        #expect(large.expiresIn == 3600 && large.interval == 60)
    }

    @Test("a device_code or user_code that is not a string counts as missing")
    func requiredMemberOfAnotherType() {
        #expect(
            throws: TokenEndpointError.malformed(
                endpoint: "device authorization endpoint", reason: "device_code, user_code or verification_uri is missing")
        ) {
            try Self.parse(#"{"device_code":7,"user_code":"u","verification_uri":"https://idp.example.com/device"}"#)
        }
    }

    @Test("an error member from the device endpoint is an OAuth error, on HTTP 200 too")
    func deviceEndpointError() {
        #expect(
            throws: TokenEndpointError.oauth(endpoint: "device authorization endpoint", OAuthErrorResponse(error: "unauthorized_client"))
        ) {
            try Self.parse(#"{"error":"unauthorized_client"}"#)
        }
    }

    @Test("a verification URI over plain http to a remote host is refused")
    func insecureVerificationURI() {
        #expect(throws: TokenEndpointError.self) {
            try Self.parse(#"{"device_code":"d","user_code":"u","verification_uri":"http://idp.example.com/device"}"#)
        }
    }
}
