// Token endpoint, device authorization endpoint and registration endpoint answers
// (OAuth/TokenResponse.swift, OAuth/DeviceAuthorization.swift,
// OAuth/ClientRegistrationResponse.swift), each read as a success and as an error status; a token
// answer also drives the device poller, as a poll's answer would.
internal import Foundation
internal import FuzzSupport
internal import LatchkeyOAuth
internal import LatchkeySupport
internal import LatchkeyVault

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let body = fuzzInput(data, size)
    for status in [200, 400] {
        let response = HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
        let poll: Result<TokenResponse, TokenEndpointError>
        do {
            let tokens = try TokenResponse.parse(response, endpoint: "token endpoint")
            precondition(status == 200 && !tokens.accessToken.exposedValue.isEmpty, "a token response was accepted without a token")
            precondition((tokens.expiresIn ?? 0) >= 0, "a negative lifetime was accepted")
            poll = .success(tokens)
        } catch {
            _ = error.description
            poll = .failure(error)
        }
        do {
            let registration = try ClientRegistrationResponse.parse(response, from: URL(string: "https://idp.example/register")!)
            precondition(status == 200 && (1...512).contains(registration.clientID.count), "a registration without a usable client_id")
            _ = registration.confidentialityProblem
        } catch {
            _ = error.description
        }
        do {
            let device = try DeviceAuthorization.parse(response)
            precondition((1...3600).contains(device.expiresIn) && (1...60).contains(device.interval), "device timings out of bounds")
            var poller = DevicePoller(authorization: device, startedAt: Date(timeIntervalSince1970: 1_704_067_200))
            _ = poller.handle(poll, now: Date(timeIntervalSince1970: 1_704_067_260))
        } catch {
            _ = error.description
        }
    }
    return 0
}

runFuzzer(testOneInput)
