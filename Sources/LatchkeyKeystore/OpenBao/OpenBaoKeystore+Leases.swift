import Foundation
import LatchkeyEssentials
import LatchkeyProviders
import LatchkeySupport
import LatchkeyVault

/// The leases held on the path, for `latchkey keystore leases` and `latchkey doctor`, and the
/// clearing of one that no Latchkey would wait for: a teammate who can write the path can still
/// hold a lease, and a person should see who holds what, and what it keeps waiting.
extension OpenBaoKeystore {
    /// One lease with an owner, as read now.
    public struct LeaseListing: Sendable, Equatable {
        /// Its path below `[openbao] path`: `lease`, or `leases/HASH` for one account's.
        public var name: String
        /// Who wrote it: host, process and a random tag, as Latchkey writes them.
        public var owner: String
        /// The deadline as written (Unix seconds).
        public var deadline: String
        public var state: State
        /// What waits while it is held.
        public var blocks: String

        public enum State: Sendable, Equatable {
            case held(secondsLeft: Int)
            /// Taken over by the next Latchkey that needs it.
            case expired(secondsAgo: Int)
            /// A deadline that is no number or beyond a lease and the clock-skew allowance:
            /// taken over at once as if expired, so it blocks nothing.
            case beyondReach
        }

        /// `lease: held by HOST pid N TAG, 40 s left; blocks …`, one line.
        public var description: String {
            let owner = TerminalText.sanitized(owner, maxLength: 200)
            let deadline = TerminalText.sanitized(deadline, maxLength: 40)
            switch state {
            case .held(let left):
                return "\(name): held by \(owner), \(left) s left; blocks \(blocks)"
            case .expired(let ago):
                return "\(name): held by \(owner) until \(ago) s ago; expired, the next Latchkey that needs it takes it over"
            case .beyondReach:
                return
                    "\(name): held by \(owner) with the deadline \(deadline), further ahead than a lease lasts plus the clock-skew allowance (\(Int(OpenBaoKeystore.clockSkewAllowance)) s); no Latchkey waits for it, the next one takes it over; blocks nothing"
            }
        }
    }

    /// Every lease on the path that has an owner: the path's, then the accounts'.
    public func leases() async throws(KeystoreError) -> [LeaseListing] {
        try await Self.typed {
            let token = try await self.currentToken()
            var listings: [LeaseListing] = []
            let everything = "sign-in, sign-out and `default` of every account on \(self.full(self.settings.path))"
            if let listing = try self.listing(
                of: try await self.client.read(mount: self.settings.mount, path: self.leasePath, token: token), name: "lease",
                blocks: everything + ", and every refresh there")
            {
                listings.append(listing)
            }
            let names = try await self.secretNames(under: self.accountLeasesPath, token: token, after: nil)
            let accounts = try await Self.concurrently(names) { name -> LeaseListing? in
                let path = self.accountLeasesPath + "/" + name
                let secret = try await self.client.read(mount: self.settings.mount, path: path, token: token)
                guard try self.leaseState(of: secret, at: path).owner != nil else { return nil }
                // Named as a person knows it, when its record can be read.
                let record = (try? await self.readAccount(name, token: token))?.record
                let account = record.map { "\($0.provider):\($0.label)" } ?? "the account kept at accounts/\(name)"
                return try self.listing(of: secret, name: "leases/" + name, blocks: "refreshes of \(account), and " + everything)
            }
            return listings + accounts.compactMap { $0 }
        }
    }

    /// Frees the lease `name` (`lease`, or `leases/HASH`, as `leases()` names them) with
    /// check-and-set, unless it is held within its deadline: that one ends by itself, and freeing
    /// it could let two machines refresh one account at once. Returns the lease as it was.
    public func clearLease(_ name: String) async throws(KeystoreError) -> LeaseListing {
        try await Self.typed {
            let hash = name.hasPrefix("leases/") ? name.dropFirst("leases/".count) : nil
            guard name == "lease" || hash.map(OpenBaoNames.isName) == true else {
                throw OpenBaoError.unknownLease(name: name, path: self.full(self.settings.path))
            }
            let path = self.settings.path + "/" + name
            let token = try await self.currentToken()
            let secret = try await self.client.read(mount: self.settings.mount, path: path, token: token)
            guard let secret, let listing = try self.listing(of: secret, name: name, blocks: "") else {
                throw OpenBaoError.unknownLease(name: name, path: self.full(self.settings.path))
            }
            if case .held(let left) = listing.state {
                throw OpenBaoError.leaseLive(path: self.full(path), owner: listing.owner, secondsLeft: left)
            }
            do {
                try await self.free(path, version: secret.version, token: token, after: nil)
            } catch OpenBaoError.refused(_, _, 403, let errors) {
                throw OpenBaoError.leaseNotCleared(path: self.full(path), errors: errors)
            }
            return listing
        }
    }

    /// The lease `secret` at `name` as listed; `nil` when free.
    private func listing(of secret: KVSecret?, name: String, blocks: String) throws -> LeaseListing? {
        let path = settings.path + "/" + name
        let deadline: String = if case .string(let text)? = secret?.data?["deadline"] { text } else { "(none)" }
        let now = now()
        switch try leaseState(of: secret, at: path) {
        case .free:
            return nil
        case .held(let holder):
            let left = Int(holder.deadline.timeIntervalSince(now).rounded(.up))
            return LeaseListing(name: name, owner: holder.owner, deadline: deadline, state: .held(secondsLeft: left), blocks: blocks)
        case .expired(let holder):
            let ago = Int(now.timeIntervalSince(holder.deadline).rounded(.down))
            return LeaseListing(name: name, owner: holder.owner, deadline: deadline, state: .expired(secondsAgo: ago), blocks: blocks)
        case .beyondReach(let owner, _):
            return LeaseListing(name: name, owner: owner, deadline: deadline, state: .beyondReach, blocks: blocks)
        }
    }
}

extension OpenBaoKeystore.LeaseState {
    /// Who wrote the lease, when anyone holds it or did.
    var owner: String? {
        switch self {
        case .free: return nil
        case .held(let holder), .expired(let holder): return holder.owner
        case .beyondReach(let owner, _): return owner
        }
    }
}
