import Testing

@testable import LatchkeyBroker

/// What a line typed on the agent's own terminal answers.
@Suite struct TypedAnswerTests {
    @Test("y N and n N answer request N, whatever else waits")
    func numbered() {
        #expect(TypedAnswer("y 3", waiting: [1, 3]) == .answer(id: 3, approve: true))
        #expect(TypedAnswer("no 1", waiting: [1, 3]) == .answer(id: 1, approve: false))
        #expect(TypedAnswer("Yes 7", waiting: []) == .answer(id: 7, approve: true), "the agent says whether 7 waits")
    }

    @Test("a bare y answers the one request that waits, and is refused while several wait instead of going to the oldest")
    func bare() {
        #expect(TypedAnswer("y", waiting: [4]) == .answer(id: 4, approve: true))
        #expect(TypedAnswer("n", waiting: [4]) == .answer(id: 4, approve: false))
        #expect(TypedAnswer("y", waiting: [2, 4]) == .whichOne([2, 4]))
        #expect(TypedAnswer("y", waiting: []) == .nothingWaits)
    }

    @Test("anything else is not an answer")
    func other() {
        for line in ["", "maybe", "y three", "approve 1"] {
            #expect(TypedAnswer(line, waiting: [1]) == .notAnAnswer, "\(line)")
        }
    }
}
