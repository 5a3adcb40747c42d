import Testing

@testable import LatchkeyBroker

/// The agent's lines about what a client can make happen as often as it likes.
@Suite struct RepeatedNoticeTests {
    @Test("said the first time, then at most once per interval with how many went unsaid")
    func rateLimited() {
        var notice = RepeatedNotice(interval: .seconds(10))
        let start = ContinuousClock.now
        #expect(notice.occurred("refused", at: start) == "refused")
        for second in 1...9 { #expect(notice.occurred("refused", at: start + .seconds(second)) == nil) }
        let next = notice.occurred("refused", at: start + .seconds(10))
        #expect(next == "refused (and 9 more like it in the 10 s before, not said one by one)")
        #expect(notice.occurred("refused", at: start + .seconds(30)) == "refused", "nothing went unsaid since")
    }
}
