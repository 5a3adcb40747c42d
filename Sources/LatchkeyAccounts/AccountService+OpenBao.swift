public import Foundation
public import LatchkeyKeystore
import LatchkeyOAuth

extension AccountService {
    /// A client for the OpenBao cluster at `addresses`, over the transport the accounts' own
    /// requests take (the same https rule, time-outs and size cap).
    public func openBao(at addresses: [URL]) -> OpenBaoClient {
        OpenBaoClient(addresses: addresses, transport: engine.transport)
    }
}
