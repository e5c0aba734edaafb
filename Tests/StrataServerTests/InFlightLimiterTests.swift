import NIOConcurrencyHelpers
import Testing
@testable import StrataServer

/// The per-connection limit on requests in flight, shared by the async
/// reader (which waits for a slot) and the event loop's handlers (which
/// take one only when it is free at once).
@Suite("In-flight limiter", .timeLimit(.minutes(1)))
struct InFlightLimiterTests {
    /// Waits (bounded) until `condition` holds.
    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the limiter never reached the expected state")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("A freed slot goes to the waiting reader, not to the event loop")
    func aFreedSlotGoesToTheWaiter() async throws {
        let limiter = InFlightLimiter(limit: 1)
        #expect(limiter.tryAcquire())
        #expect(!limiter.tryAcquire())

        // The reader waits for the slot.
        let reader = Task { await limiter.acquire() }
        try await eventually { limiter.waitingCount == 1 }
        #expect(!limiter.tryAcquire())

        // The slot passes straight to the reader, before it even resumes:
        // still one running, and the event loop finds none free.
        limiter.release()
        #expect(limiter.waitingCount == 0)
        #expect(limiter.running == 1)
        #expect(!limiter.tryAcquire())
        await reader.value

        limiter.release()
        #expect(limiter.running == 0)
        #expect(limiter.tryAcquire())
        limiter.release()
    }

    @Test("Once the connection drains, the event loop takes no slot; the wait for idle sees every running request end")
    func drainingRefusesAndWaitsForIdle() async throws {
        let limiter = InFlightLimiter(limit: 4)
        #expect(limiter.tryAcquire())
        await limiter.acquire()
        #expect(limiter.running == 2)

        limiter.stopTaking()
        #expect(!limiter.tryAcquire())

        let idle = Task { await limiter.waitUntilIdle() }
        limiter.release()
        #expect(limiter.running == 1)
        limiter.release()
        await idle.value
        #expect(limiter.running == 0)
        // Still draining: the free slots stay refused to the event loop.
        #expect(!limiter.tryAcquire())
    }

    @Test("Many readers and event-loop takers never hold more than the limit")
    func neverMoreThanTheLimit() async throws {
        let limit = 3
        let limiter = InFlightLimiter(limit: limit)
        let peak = PeakCounter()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        await limiter.acquire()
                    } else {
                        while !limiter.tryAcquire() { await Task.yield() }
                    }
                    peak.enter()
                    await Task.yield()
                    peak.leave()
                    limiter.release()
                }
            }
        }
        #expect(peak.value <= limit)
        #expect(peak.value >= 1)
        #expect(limiter.running == 0)
    }

    @Test("The last request to end restarts the connection's idle time; one ending beside another does not")
    func theLastAnswerRestartsIdleTime() async throws {
        let activity = ActivityClock()
        let limiter = InFlightLimiter(limit: 2, activity: activity)
        #expect(limiter.tryAcquire())
        #expect(limiter.tryAcquire())
        // The requests run longer than the wait below: the frame that asked
        // for them is by then this long ago (the wait is longer than that
        // by more than the clock's few milliseconds of resolution).
        try await Task.sleep(for: .milliseconds(250))
        #expect(activity.idleTime >= .milliseconds(200))

        limiter.release()
        // One still runs: the connection is not idle, and its clock is the
        // frame's (the watchdog does not close while a request runs).
        #expect(limiter.running == 1)
        #expect(activity.idleTime >= .milliseconds(200))

        limiter.release()
        #expect(limiter.running == 0)
        #expect(activity.idleTime < .milliseconds(200), "idle for \(activity.idleTime) right after the last answer")
    }
}

/// How many tasks are inside at once, and the most there ever were.
private final class PeakCounter: Sendable {
    private let state = NIOLockedValueBox((inside: 0, peak: 0))

    /// The most tasks that were inside at once.
    var value: Int { state.withLockedValue { $0.peak } }

    func enter() {
        state.withLockedValue { state in
            state.inside += 1
            state.peak = max(state.peak, state.inside)
        }
    }

    func leave() {
        state.withLockedValue { $0.inside -= 1 }
    }
}
