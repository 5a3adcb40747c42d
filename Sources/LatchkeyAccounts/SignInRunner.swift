import Foundation
import LatchkeyKeystore
import LatchkeyOAuth
import LatchkeyProviders
import LatchkeySecondFactor
import LatchkeySupport
import LatchkeyVault

/// Carries out `SignInFlow`'s actions with the service's seams (keystore, OAuth engine, browser,
/// listener, firebase backend) and the person's `SignInInteraction`: the effects at the
/// edge of a sign-in, and nothing that decides.
struct SignInRunner {
    let service: AccountService
    let interaction: any SignInInteraction
    let timeout: Duration

    func run(_ initial: SignInFlow) async throws -> (AccountRecord, AccountService.SignInOutcome) {
        var flow = initial
        var effects = Effects(runner: self)
        var action = flow.start()
        while true {
            switch action {
            case .finished(let record, let outcome): return (record, outcome)
            case .failed(let error):
                // A listener bound before a later step failed (a registration, a pushed request).
                await effects.closeListener()
                throw error
            default: action = flow.handle(await effects.perform(action))
            }
        }
    }

    /// One sign-in's effects, with the listener it holds between binding and the redirect.
    private struct Effects {
        let runner: SignInRunner
        var listener: (any RedirectListener)?

        init(runner: SignInRunner) {
            self.runner = runner
        }

        private var service: AccountService { runner.service }
        private var interaction: any SignInInteraction { runner.interaction }

        mutating func perform(_ action: SignInFlow.Action) async -> SignInFlow.Event {
            do {
                return try await performOrThrow(action)
            } catch let error as FirebaseAuthError {
                return .backendFailed(error)
            } catch {
                return .effectFailed(error)
            }
        }

        /// Stops listening, if a listener is still held.
        mutating func closeListener() async {
            guard let bound = listener else { return }
            listener = nil
            await bound.close()
        }

        /// A listener on one of `provider`'s `loopback_port`s; for a client Latchkey registers
        /// itself (no `loopback_port`), on the port its registration names when that is free, so
        /// the registration is reused, else on any, which the flow then registers again for.
        private func bindListener(for provider: OAuthProvider) async throws -> any RedirectListener {
            let listeners = service.listeners
            let listen = { (ports: [Int]) in
                try await listeners.bind(path: provider.redirectPath, host: provider.loopbackHost, ports: ports)
            }
            guard provider.loopbackPorts.isEmpty, provider.choices.registration == .dynamic,
                let registered = try await service.keystore.registeredClient(for: provider.name),
                let port = registered.redirectURIs.first.flatMap({ URLComponents(string: $0)?.port })
            else { return try await listen(provider.loopbackPorts) }
            do {
                return try await listen([port])
            } catch {
                return try await listen([])
            }
        }

        /// Firebase backend errors come back as `backendFailed` (the resolver decides whether to
        /// go on); every other error ends the sign-in.
        private mutating func performOrThrow(_ action: SignInFlow.Action) async throws -> SignInFlow.Event {
            switch action {
            case .openKeystore:
                // Unlock (or get a new vault's passphrase, or fail) before the person does any work.
                try await service.keystore.prepareForWriting()
                return .keystoreOpened
            case .findFirstFactor(let name, let firebase):
                return .firstFactorFound(try service.catalog.openIDProvider(named: name, firstFactorOf: firebase.name))
            case .chooseRedirectMode(let provider):
                return .redirectModeChosen(await interaction.chooseRedirectMode(for: provider))
            case .notify(.federatedSignInStarted(let first, let firebase)):
                await interaction.federatedSignInStarted(at: first, for: firebase)
                return .notified
            case .notify(.federatedSignInPassed(let first, let firebase)):
                await interaction.federatedSignInPassed(at: first, for: firebase)
                return .notified
            case .fetchMetadata(let provider):
                // A person is waiting to sign in: a fresh document, which also corrects a stale one remembered.
                return .metadataFetched(try await service.engine.metadata(for: provider, fresh: true))
            case .registerClient(let provider, let metadata, let forDevice):
                let client = try await service.registeredClient(
                    for: provider, metadata: metadata, forDevice: forDevice, interaction: interaction)
                return .clientRegistered(clientID: client.clientID, grantsDeviceCode: client.grantsDeviceCode == true)
            case .bindListener(let provider):
                // Bound before the browser opens (RFC 8252 §7.3), so the redirect cannot race the listener.
                let bound = try await bindListener(for: provider)
                listener = bound
                return .listenerBound(port: bound.port, addresses: bound.addresses)
            case .pushAuthorizationRequest(let pending):
                return .authorizationRequestPushed(try await service.engine.push(pending))
            case .openBrowser(let pending, let addresses):
                return try await awaitRedirect(pending, listeningOn: addresses)
            case .answerBrowser(let answer):
                guard let bound = listener else { preconditionFailure("answerBrowser without a listener") }
                listener = nil
                await bound.answer(answer)
                await bound.close()
                return .browserAnswered
            case .askForPastedRedirect(let pending):
                await interaction.authorizationStarted(
                    url: pending.authorizationURL, provider: pending.provider, redirectURI: pending.redirectURI, listeningOn: [])
                let interaction = self.interaction
                let pasted = try await withDeadline(
                    runner.timeout, clock: service.engine.clock,
                    expired: SignInError.pasteTimedOut(provider: pending.provider.name, seconds: Int(runner.timeout.components.seconds))
                ) {
                    try await interaction.pasteRedirectURL(
                        url: pending.authorizationURL, provider: pending.provider, redirectURI: pending.redirectURI)
                }
                return .redirectPasted(pasted)
            case .startDeviceAuthorization(let provider, let metadata):
                return .deviceAuthorizationStarted(
                    try await service.engine.startDeviceAuthorization(provider: provider, metadata: metadata))
            case .pollDeviceAuthorization(let authorization, let provider, let metadata):
                await interaction.deviceCodeIssued(authorization, provider: provider)
                return .accountIdentified(
                    try await service.engine.completeDeviceAuthorization(authorization, provider: provider, metadata: metadata))
            case .exchange(let code, let pending):
                return .accountIdentified(try await service.engine.exchange(code, for: pending))
            case .askForCredentials(let firebase):
                return .credentialsEntered(await interaction.credentials(for: firebase))
            case .submitFirstFactor(let factor, let firebase):
                return .firstFactorAnswered(try await service.firebaseBackend(for: firebase).signIn(factor))
            case .chooseHint(let hints):
                return .hintChosen(await interaction.chooseHint(hints))
            case .sendCode(let hint, let purpose, let notice, let firebase):
                let session = try await service.firebaseBackend(for: firebase).startVerification(hint, for: purpose)
                await interaction.verificationStarted(session, notice: notice)
                return .codeSent(session)
            case .askForCode(let session, let problem):
                return .codeAnswered(await interaction.enterCode(for: session, problem: problem))
            case .finalize(let session, let code, let purpose, let firebase):
                return .secondFactorPassed(
                    try await service.firebaseBackend(for: firebase).finishVerification(session, code: code, for: purpose))
            case .identifyFirebaseAccount(let tokens, let factor, let firebase, let previous):
                do {
                    return .accountIdentified(
                        try await service.firebaseAccount(
                            from: tokens, provider: firebase, factorUsed: factor?.kind.rawValue, previous: previous))
                } catch let error as FirebaseAuthError {
                    // The tokens are final: a rejected one ends the sign-in, it is not a wrong code.
                    return .effectFailed(error)
                }
            case .store(let record):
                return .stored(try await service.store(record))
            case .finished, .failed:
                preconditionFailure("the runner stops at \(action)")
            }
        }

        /// Sends the browser and waits for the one request the listener takes; the listener stays
        /// open (its browser waiting) until the flow has judged the request.
        private mutating func awaitRedirect(_ pending: PendingAuthorization, listeningOn addresses: [String]) async throws
            -> SignInFlow.Event
        {
            guard let bound = listener else { preconditionFailure("openBrowser before bindListener") }
            await interaction.authorizationStarted(
                url: pending.authorizationURL, provider: pending.provider, redirectURI: pending.redirectURI, listeningOn: addresses)
            do {
                try service.browser.open(pending.authorizationURL)
            } catch {
                await interaction.browserUnavailable(url: pending.authorizationURL, reason: error.description)
            }
            guard let request = await bound.awaitRedirect(timeout: runner.timeout) else {
                listener = nil
                await bound.close()
                throw SignInError.timedOut(provider: pending.provider.name, seconds: Int(runner.timeout.components.seconds))
            }
            return .redirectReceived(request)
        }
    }
}
