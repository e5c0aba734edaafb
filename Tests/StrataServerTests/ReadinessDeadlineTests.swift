import Foundation
import Testing
@testable import StrataServer

/// `GET /ready` answers within its deadline even when a store's probe is
/// stuck (a query waiting behind a database lock may not end when
/// cancelled).
@Suite struct ReadinessDeadlineTests {
    @Test("A probe that does not finish is answered as late at the deadline, without waiting for it")
    func lateProbeIsNotAwaited() async {
        let started = ContinuousClock.now
        let answer = await StrataServer.answerWithin(.milliseconds(100)) { () async -> String in
            // Ignores cancellation, as a query stuck behind a lock may.
            let until = ContinuousClock.now.advanced(by: .seconds(3))
            while ContinuousClock.now < until { try? await Task.sleep(for: .milliseconds(50)) }
            return "answered"
        } late: {
            "late"
        }
        #expect(answer == "late")
        #expect(ContinuousClock.now - started < .seconds(2))
        let quick = await StrataServer.answerWithin(.seconds(2)) { "answered" } late: { "late" }
        #expect(quick == "answered")
    }
}
