import Testing

@testable import LatchkeyBroker
@testable import LatchkeyKeystore

/// The release rule, door by door and event by event: what the agent (local and forwarded
/// sockets) and a command without the agent do with a token request, as the `Action`s they carry
/// out. The doors only perform these; `ReleaseApprovalTests` and the end-to-end agent tests show
/// they do.
@Suite("One release decision for the agent's sockets and the commands")
struct ReleaseDecisionTests {
    typealias Action = ReleaseDecision.Action

    static func decision(_ door: ReleaseDecision.Door, forward: Bool = false, confirm: Bool = false) -> ReleaseDecision {
        ReleaseDecision(account: "corp:alice", provider: "corp", door: door, forward: forward, confirm: confirm, confirmSeconds: 30)
    }

    static let local = decision(.agent(forwarded: false))
    static let forwarded = decision(.agent(forwarded: true), forward: true)

    @Test("the agent fetches the token first, then logs the release, tells the hook and hands it over")
    func agentReleasesWithoutAsking() {
        for decision in [Self.local, Self.forwarded] {
            #expect(decision.chosen() == [.fetchToken])
            #expect(decision.tokenReady() == [.log(.released), .fireReleaseHook, .handOver])
        }
    }

    @Test("a token the agent cannot fetch is logged as refused with the reason; the error goes to the client as it is")
    func agentLogsAFailedFetch() {
        #expect(
            Self.local.tokenFailed(reason: "the refresh token was refused") == [.log(.refused, reason: "the refresh token was refused")])
    }

    @Test("a command fetches its token and hands it over unasked, logging nothing and firing no hook")
    func commandReleasesWithoutAsking() {
        let command = Self.decision(.command)
        #expect(command.chosen() == [.fetchToken])
        #expect(command.tokenReady() == [.handOver])
        #expect(command.tokenFailed(reason: "anything").isEmpty)
    }

    @Test("confirm = true asks first at every door, for confirm_timeout seconds, before any token is fetched")
    func confirmAsksFirst() {
        for door in [ReleaseDecision.Door.agent(forwarded: false), .agent(forwarded: true), .command] {
            #expect(Self.decision(door, forward: true, confirm: true).chosen() == [.ask(seconds: 30)])
        }
    }

    @Test("approved: every door goes on to fetch, and logs the release once it has the token (a command too, as a person approved it)")
    func approved() {
        var agent = Self.decision(.agent(forwarded: false), confirm: true)
        #expect(agent.answered(.approved) == [.fetchToken])
        #expect(agent.tokenReady() == [.log(.released), .fireReleaseHook, .handOver])
        var command = Self.decision(.command, confirm: true)
        #expect(command.answered(.approved) == [.fetchToken])
        #expect(command.tokenReady() == [.log(.released), .handOver])
    }

    @Test("denied, unanswered, abandoned or nobody to ask: logged with its own outcome and refused with its own error")
    func refusedAnswers() {
        for door in [ReleaseDecision.Door.agent(forwarded: false), .agent(forwarded: true), .command] {
            var decision = Self.decision(door, forward: true, confirm: true)
            #expect(decision.answered(.denied) == [.log(.denied), .refuse(.denied(account: "corp:alice"))])
            #expect(decision.answered(.timedOut) == [.log(.unapproved), .refuse(.notApproved(account: "corp:alice", seconds: 30))])
            #expect(
                decision.answered(.abandoned) == [
                    .log(.refused, reason: "the client went away"), .refuse(.abandoned(account: "corp:alice")),
                ])
            #expect(
                decision.answered(.nobodyToAsk) == [.log(.refused, reason: "nobody to ask"), .refuse(.nobodyToAsk(account: "corp:alice"))])
        }
    }

    @Test("a forwarded host sees and gets only accounts marked forward = true; local doors see every account")
    func forwardedSeesSharedAccountsOnly() {
        #expect(!ReleaseDecision.isVisible(forward: false, at: .agent(forwarded: true)))
        #expect(ReleaseDecision.isVisible(forward: true, at: .agent(forwarded: true)))
        #expect(ReleaseDecision.isVisible(forward: false, at: .agent(forwarded: false)))
        #expect(ReleaseDecision.isVisible(forward: false, at: .command))
        let unshared = Self.decision(.agent(forwarded: true), forward: false)
        #expect(unshared.chosen() == ReleaseDecision.noSharedAccount)
        #expect(ReleaseDecision.noSharedAccount.last == .refuse(.notShared))
    }

    @Test("a forwarded host is narrowed only to a resource the provider file lists; a local client to any")
    func forwardedResourcesAreListed() {
        #expect(
            Self.forwarded.chosen(naming: [.resource: false]) == [
                .log(.refused, reason: "a resource the provider file does not list"), .refuse(.notListed(.resource, provider: "corp")),
            ])
        #expect(Self.forwarded.chosen(naming: [.resource: true]) == [.fetchToken])
        #expect(Self.local.chosen(naming: [.resource: false]) == [.fetchToken])
    }

    @Test("a forwarded host gets AWS credentials only for a role the provider file lists, and from its STS endpoint only")
    func forwardedRolesAndEndpointsAreListed() {
        #expect(
            Self.forwarded.chosen(naming: [.awsRole: false]) == [
                .log(.refused, reason: "an AWS role the provider file does not list"), .refuse(.notListed(.awsRole, provider: "corp")),
            ])
        #expect(
            Self.forwarded.chosen(naming: [.awsRole: true, .stsEndpoint: false]) == [
                .log(.refused, reason: "an STS endpoint the provider file does not name"),
                .refuse(.notListed(.stsEndpoint, provider: "corp")),
            ])
        #expect(Self.forwarded.chosen(naming: [.awsRole: true, .stsEndpoint: true]) == [.fetchToken])
        #expect(Self.local.chosen(naming: [.awsRole: false, .stsEndpoint: false]) == [.fetchToken])
        #expect(Self.decision(.command).chosen(naming: [.awsRole: false]) == [.fetchToken])
    }

    @Test("an account not shared is refused as not shared, whatever the request names")
    func unsharedBeforeUnlisted() {
        let unshared = Self.decision(.agent(forwarded: true), forward: false)
        #expect(unshared.chosen(naming: [.awsRole: false]) == ReleaseDecision.noSharedAccount)
    }

    @Test("an unlisted resource or role is refused before a confirm = true account's person is even asked")
    func refusalBeforeQuestion() {
        let decision = Self.decision(.agent(forwarded: true), forward: true, confirm: true)
        #expect(decision.chosen(naming: [.resource: false]).last == .refuse(.notListed(.resource, provider: "corp")))
        #expect(decision.chosen(naming: [.awsRole: false]).last == .refuse(.notListed(.awsRole, provider: "corp")))
        #expect(decision.chosen(naming: [.awsRole: true]) == [.ask(seconds: 30)])
    }

    @Test("a refusal names the provider file's keys to list it under")
    func refusalsNameTheKeys() {
        #expect(ReleaseRefusal.notListed(.resource, provider: "corp").description.contains("(resources, git_resource)"))
        #expect(ReleaseRefusal.notListed(.awsRole, provider: "corp").description.contains("(aws_role_arn, aws_roles)"))
        #expect(ReleaseRefusal.notListed(.stsEndpoint, provider: "corp").description.contains("(aws_sts_endpoint)"))
    }

    @Test("every sequence ends in exactly one hand-over or refusal")
    func everySequenceEnds() {
        let doors: [ReleaseDecision.Door] = [.agent(forwarded: false), .agent(forwarded: true), .command]
        let answers: [ReleaseDecision.Answer] = [.approved, .denied, .timedOut, .abandoned, .nobodyToAsk]
        for door in doors {
            for forward in [false, true] {
                for confirm in [false, true] {
                    for named in ReleaseDecision.Named.allCases {
                        for listed in [false, true] {
                            let decision = Self.decision(door, forward: forward, confirm: confirm)
                            for answer in answers {
                                let ending = run(decision, decision.chosen(naming: [named: listed]), answer: answer)
                                #expect(ending.filter(\.isFinal).count == 1, "\(door) forward \(forward) confirm \(confirm) \(answer)")
                                #expect(ending.last?.isFinal == true)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Plays the actions as a door would, answering `ask` with `answer` and fetching successfully.
    private func run(_ decision: ReleaseDecision, _ start: [Action], answer: ReleaseDecision.Answer) -> [Action] {
        var decision = decision
        var done: [Action] = []
        var actions = start[...]
        while let action = actions.popFirst() {
            done.append(action)
            switch action {
            case .ask: actions = decision.answered(answer)[...]
            case .fetchToken: actions = decision.tokenReady()[...]
            default: continue
            }
        }
        return done
    }
}

extension ReleaseDecision.Action {
    fileprivate var isFinal: Bool {
        switch self {
        case .handOver, .refuse: return true
        default: return false
        }
    }
}
