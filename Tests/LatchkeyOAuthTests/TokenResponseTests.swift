import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyOAuth
@testable import LatchkeySupport
@testable import LatchkeyVault

@Suite("Token responses (RFC 6749 §5)")
struct TokenResponseTests {
    static let endpoint = "token endpoint"

    static func parse(_ json: String, status: Int = 200) throws(TokenEndpointError) -> TokenResponse {
        try TokenResponse.parse(HTTPResponse(status: status, body: Array(json.utf8)), endpoint: endpoint)
    }

    /// The `reason` of a `.malformed` error, `nil` for success or another error.
    static func malformedReason(_ json: String, status: Int = 200) -> String? {
        do {
            _ = try parse(json, status: status)
            return nil
        } catch {
            if case .malformed(_, let reason) = error { return reason }
            return nil
        }
    }

    @Test("a §5.1 success response yields every field")
    func success() throws {
        let response = try TokenResponse.parse(
            HTTPResponse(status: 200, body: try fixtures.bytes("token-responses/success.json")), endpoint: Self.endpoint)
        #expect(response.accessToken.exposedValue == "fake-access-token-2YotnFZFEjr1zCsicMWpAA")
        #expect(response.tokenType == "Bearer")
        #expect(response.expiresIn == 3600)
        #expect(response.refreshToken?.exposedValue == "fake-refresh-token-tGzv3JOkF0XG5Qx2TlKWIA")
        #expect(response.scope == "openid email")
        #expect(response.idToken?.exposedValue == "fake.id.token")
    }

    @Test("expires_in of 0 and 1 are numbers, not booleans", arguments: [0, 1])
    func smallExpiry(seconds: Int) throws {
        #expect(try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":\#(seconds)}"#).expiresIn == seconds)
    }

    @Test("expires_in given as a JSON boolean is rejected")
    func booleanExpiry() {
        #expect(Self.malformedReason(#"{"access_token":"a","token_type":"Bearer","expires_in":true}"#) != nil)
    }

    @Test("optional members may be absent or null")
    func minimalSuccess() throws {
        let response = try Self.parse(#"{"access_token":"a","token_type":"bearer","refresh_token":null,"scope":""}"#)
        #expect(response.expiresIn == nil)
        #expect(response.refreshToken == nil)
        #expect(response.scope == nil)
        #expect(response.idToken == nil)
    }

    @Test("a §5.2 error keeps its code, description and URI")
    func errorResponse() {
        #expect(
            throws: TokenEndpointError.oauth(
                endpoint: Self.endpoint, OAuthErrorResponse(error: "invalid_grant", errorDescription: "Token has been expired or revoked."))
        ) {
            try Self.parse(#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#, status: 400)
        }
    }

    @Test("invalid_grant means sign in again; other OAuth errors do not")
    func invalidGrantCategory() {
        let dead = TokenEndpointError.oauth(endpoint: Self.endpoint, OAuthErrorResponse(error: "invalid_grant"))
        let other = TokenEndpointError.oauth(endpoint: Self.endpoint, OAuthErrorResponse(error: "invalid_client"))
        #expect(dead.isInvalidGrant)
        #expect(!other.isInvalidGrant)
        #expect(dead.category == .notFound)
        #expect(other.category == .rejected)
    }

    @Test("an error member on HTTP 200 (GitHub's style) is an error, not a success")
    func errorOnHTTP200() throws {
        let body = try fixtures.bytes("token-responses/github-error-200.json")
        do {
            _ = try TokenResponse.parse(HTTPResponse(status: 200, body: body), endpoint: Self.endpoint)
            Issue.record("an error body was accepted as tokens")
        } catch {
            guard case .oauth(_, let response) = error else {
                Issue.record("expected .oauth, got \(error)")
                return
            }
            #expect(response.error == "bad_verification_code")
            #expect(response.errorDescription == "The code passed is incorrect or expired.")
            #expect(response.errorURI?.hasPrefix("https://docs.github.com/") == true)
        }
    }

    @Test("a non-200 status without an OAuth error is malformed")
    func serverErrorWithoutOAuthError() {
        #expect(Self.malformedReason(#"{"message":"internal"}"#, status: 500)?.contains("HTTP 500") == true)
    }

    @Test("a response without access_token is rejected")
    func missingAccessToken() {
        #expect(Self.malformedReason(#"{"token_type":"Bearer"}"#)?.contains("access_token") == true)
        #expect(Self.malformedReason(#"{"access_token":"","token_type":"Bearer"}"#)?.contains("access_token") == true)
        #expect(Self.malformedReason(#"{"access_token":42,"token_type":"Bearer"}"#)?.contains("access_token") == true)
    }

    @Test("a response without token_type is rejected")
    func missingTokenType() {
        #expect(Self.malformedReason(#"{"access_token":"a"}"#)?.contains("token_type") == true)
    }

    @Test("expires_in as a JSON number is read", arguments: [2, 3599, 86_400])
    func expiresInNumber(seconds: Int) throws {
        #expect(try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"# + String(seconds) + "}").expiresIn == seconds)
    }

    @Test("expires_in sent as a numeric string is accepted")
    func expiresInString() throws {
        #expect(try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"3600"}"#).expiresIn == 3600)
    }

    @Test("expires_in that is not a non-negative number is rejected", arguments: [#""abc""#, #""""#, "-5", "true", "[3600]", #""36 00""#])
    func expiresInInvalid(value: String) {
        #expect(
            Self.malformedReason(#"{"access_token":"a","token_type":"Bearer","expires_in":"# + value + "}")?.contains("expires_in") == true)
    }

    @Test("expires_in written as a string is accepted", arguments: ["0", "1", "86400"])
    func expiresInStringForms(text: String) throws {
        let response = try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"\#(text)"}"#)
        #expect(response.expiresIn == Int(text))
    }

    @Test("expires_in written as a whole number with a fraction part of zero is accepted")
    func expiresInWholeFloat() throws {
        #expect(try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":3600.0}"#).expiresIn == 3600)
    }

    @Test(
        "expires_in with a fraction, false, an object or a negative number is rejected, not truncated",
        arguments: ["3600.5", "false", #"{"s":1}"#, "-5", #""-5""#, #""12a""#, #""""#])
    func expiresInNotWholeSeconds(value: String) {
        #expect(
            Self.malformedReason(#"{"access_token":"a","token_type":"Bearer","expires_in":"# + value + "}")
                == "expires_in is not a non-negative number")
    }

    @Test(
        "an absurdly long expires_in, as a number or as a string, is clamped to ten years",
        arguments: ["1000000000", "1e300", #""99999999999999999999999""#, "9.3e18"])
    func expiresInClamped(value: String) throws {
        let parsed = try Self.parse(#"{"access_token":"a","token_type":"Bearer","expires_in":"# + value + "}")
        #expect(parsed.expiresIn == 10 * 365 * 86_400)
    }

    @Test(
        "a token holding control characters or spaces is rejected before it can reach a terminal or a header",
        arguments: ["access_token", "refresh_token", "id_token"])
    func tokenWithControlCharacters(member: String) {
        var members = ["access_token": "a", "token_type": "Bearer"]
        members[member] = #"abc\u001b]52;c;ZXZpbA==\u0007"#
        let body = "{" + members.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        #expect(Self.malformedReason(body) == "\(member) holds characters no token has (spaces or control characters)")
    }

    @Test("scope and id_token that are not strings are rejected", arguments: ["scope", "id_token"])
    func optionalMemberWrongType(member: String) {
        #expect(Self.malformedReason(#"{"access_token":"a","token_type":"Bearer","\#(member)":["x"]}"#) == "\(member) is not a string")
    }

    @Test("a token_type that is not a string is rejected", arguments: ["7", "true", "null", #""""#])
    func tokenTypeWrongType(value: String) {
        #expect(Self.malformedReason(#"{"access_token":"a","token_type":"# + value + "}") == "token_type is missing or not a string")
    }

    @Test("an error member wins over malformed token members, on HTTP 200 too")
    func errorBeforeMembers() {
        #expect(throws: TokenEndpointError.oauth(endpoint: Self.endpoint, OAuthErrorResponse(error: "slow_down"))) {
            try Self.parse(#"{"error":"slow_down","access_token":42,"expires_in":true}"#)
        }
    }

    @Test("an error_description or error_uri of another type is dropped, the error code kept")
    func errorMembersOfOtherTypes() {
        #expect(throws: TokenEndpointError.oauth(endpoint: Self.endpoint, OAuthErrorResponse(error: "invalid_grant"))) {
            try Self.parse(#"{"error":"invalid_grant","error_description":{"text":"x"},"error_uri":5}"#, status: 400)
        }
    }

    @Test("an error member that is not a string is no OAuth error")
    func errorMemberNotAString() {
        #expect(Self.malformedReason(#"{"error":400}"#, status: 400) == "HTTP 400 without an OAuth error")
    }

    @Test("a JSON body that is not an object says so", arguments: ["[1,2]", #""text""#, "42"])
    func notAnObject(body: String) {
        #expect(Self.malformedReason(body, status: 200) == "the body is not a JSON object (HTTP 200)")
    }

    @Test("a body that is not JSON at all says so", arguments: ["<html>", "", "{\"access_token\":"])
    func notJSONAtAll(body: String) {
        #expect(Self.malformedReason(body, status: 200) == "the body is not JSON (HTTP 200)")
    }

    @Test("a refresh_token that is not a string is rejected")
    func refreshTokenWrongType() {
        #expect(Self.malformedReason(#"{"access_token":"a","token_type":"Bearer","refresh_token":7}"#)?.contains("refresh_token") == true)
    }

    @Test("a body that is not JSON is rejected with the HTTP status", arguments: ["<html><body>Bad Gateway</body></html>", "", "[1,2]"])
    func notJSON(body: String) {
        #expect(Self.malformedReason(body, status: 502)?.contains("HTTP 502") == true)
    }

    @Test("an error description with control characters prints inert")
    func errorDescriptionSanitised() {
        let error = TokenEndpointError.oauth(
            endpoint: Self.endpoint, OAuthErrorResponse(error: "invalid_request", errorDescription: "bad\u{1B}[31m\u{07}"))
        #expect(!error.description.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(error.description.contains("bad"))
    }

    @Test("tokens never show in string interpolation")
    func tokensRedacted() throws {
        let response = try TokenResponse.parse(
            HTTPResponse(status: 200, body: try fixtures.bytes("token-responses/success.json")), endpoint: Self.endpoint)
        let printed = "\(response)"
        #expect(!printed.contains("fake-access-token"))
        #expect(!printed.contains("fake-refresh-token"))
    }
}
