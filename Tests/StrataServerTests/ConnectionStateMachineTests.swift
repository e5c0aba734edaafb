import NIOConcurrencyHelpers
import StrataWire
import Testing
@testable import StrataServer

/// The connection's life event by event, without I/O.
@Suite struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine

    @Test("A connection is held to the hello's frame size and answers nothing on the loop until its hello's answer is queued")
    func helloThenServing() {
        var machine = Machine(maxFrameBytes: 1 << 20)
        #expect(machine.state == .awaitingHello)
        #expect(machine.frameLimit == WireProtocol.helloFrameBytes)
        #expect(!machine.answersOnEventLoop)
        #expect(machine.takesRequests)
        // An answer queued before the hello was accepted changes nothing.
        #expect(machine.helloAnswerQueued() == .none)
        #expect(machine.state == .awaitingHello)
        #expect(machine.helloAccepted() == .raiseFrameLimit(1 << 20))
        #expect(machine.state == .greeting)
        #expect(machine.frameLimit == 1 << 20)
        #expect(!machine.answersOnEventLoop, "not before the hello's answer is queued")
        #expect(machine.helloAccepted() == .none, "a second hello changes nothing")
        #expect(machine.helloAnswerQueued() == .none)
        #expect(machine.state == .serving)
        #expect(machine.answersOnEventLoop)
    }

    @Test("A small max_frame_bytes is the limit before the hello too")
    func smallLimit() {
        let machine = Machine(maxFrameBytes: 2048)
        #expect(machine.frameLimit == 2048)
    }

    @Test("Reading stops once, for the first reason; the loop stops answering at once", arguments: [
        Machine.DrainReason.inputEnded, .protocolError, .helloRefused, .shutdown, .idle,
    ])
    func stopReading(reason: Machine.DrainReason) {
        var machine = Machine(maxFrameBytes: 1 << 20)
        _ = machine.helloAccepted()
        _ = machine.helloAnswerQueued()
        #expect(machine.stopReading(reason) == .stopTakingRequests)
        #expect(machine.state == .draining(reason))
        #expect(!machine.answersOnEventLoop)
        #expect(!machine.takesRequests)
        #expect(machine.stopReading(.inputEnded) == .none)
        #expect(machine.state == .draining(reason), "the first reason stays")
        // The hello's answer queued late does not reopen answering.
        #expect(machine.helloAnswerQueued() == .none)
        #expect(!machine.answersOnEventLoop)
    }

    @Test("A protocol error before the hello's answer is queued keeps the loop from ever answering")
    func protocolErrorWhileGreeting() {
        var machine = Machine(maxFrameBytes: 1 << 20)
        _ = machine.helloAccepted()
        #expect(machine.stopReading(.protocolError) == .stopTakingRequests)
        #expect(machine.helloAnswerQueued() == .none)
        #expect(!machine.answersOnEventLoop)
    }

    @Test("Closing cancels the work once, from any state", arguments: [0, 1, 2, 3])
    func closing(stepsBefore: Int) {
        var machine = Machine(maxFrameBytes: 1 << 20)
        if stepsBefore > 0 { _ = machine.helloAccepted() }
        if stepsBefore > 1 { _ = machine.helloAnswerQueued() }
        if stepsBefore > 2 { _ = machine.stopReading(.inputEnded) }
        #expect(machine.channelClosed() == .cancelWork)
        #expect(machine.state == .closed)
        #expect(!machine.answersOnEventLoop)
        #expect(!machine.takesRequests)
        #expect(machine.channelClosed() == .none)
        #expect(machine.stopReading(.shutdown) == .none)
        #expect(machine.helloAccepted() == .none)
        #expect(machine.helloAnswerQueued() == .none)
        #expect(machine.state == .closed)
    }

    @Test("ConnectionState carries out the actions: frame limit, no requests taken, work cancelled once")
    func actionsAreCarriedOut() {
        let state = ConnectionState(maxRequestsInFlight: 2, maxFrameBytes: 1 << 20)
        #expect(state.frameLimit.current == WireProtocol.helloFrameBytes)
        state.helloAccepted()
        #expect(state.frameLimit.current == 1 << 20)
        state.greeted(clientName: "c")
        #expect(state.answersOnEventLoop)
        #expect(state.limiter.tryAcquire())
        state.limiter.release()
        let cancelled = NIOLockedValueBoxCounter()
        state.onCancel { cancelled.increment() }
        state.stopReading(.inputEnded)
        #expect(!state.answersOnEventLoop)
        #expect(!state.limiter.tryAcquire(), "no request is taken on the loop once reading stopped")
        state.channelClosed()
        state.channelClosed()
        #expect(cancelled.value == 1)
        // A canceller registered after the close runs at once.
        state.onCancel { cancelled.increment() }
        #expect(cancelled.value == 2)
    }
}

/// A counter for tests, safe from any task.
final class NIOLockedValueBoxCounter: Sendable {
    private let box = NIOLockedValueBox(0)
    func increment() { box.withLockedValue { $0 += 1 } }
    var value: Int { box.withLockedValue { $0 } }
}
