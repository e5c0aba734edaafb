import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import StrataServer

/// `GET /ready` answers at its deadline even when a store's probe is stuck
/// (a query waiting behind a database lock may not end when cancelled).
@Suite struct ReadinessDeadlineTests {
    @Test("A probe that does not finish is answered as late, without waiting for it")
    func lateProbeIsNotAwaited() async {
        // The probe waits for a release that comes only after the answer,
        // and ignores cancellation, as a query stuck behind a lock may.
        struct Gate { var released = false; var waiter: CheckedContinuation<Void, Never>? }
        let gate = NIOLockedValueBox(Gate())
        let finished = NIOLockedValueBox(false)
        let answer = await StrataServer.answerWithin(.milliseconds(100)) { () async -> String in
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = gate.withLockedValue { gate in
                    if gate.released { return true }
                    gate.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            finished.withLockedValue { $0 = true }
            return "answered"
        } late: {
            "late"
        }
        #expect(answer == "late")
        #expect(!finished.withLockedValue { $0 }, "the answer waited for the probe")
        gate.withLockedValue { gate in
            gate.released = true
            gate.waiter?.resume()
            gate.waiter = nil
        }
        let quick = await StrataServer.answerWithin(.seconds(30)) { "answered" } late: { "late" }
        #expect(quick == "answered")
    }
}
