import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
@testable import StrataServer

/// Completions handed back to a loop in batches: run in the order they
/// were submitted, one loop task per batch, one flush per connection at
/// the batch's end, and the in-flight slots given back after it; answers
/// written on the loop flushed together at the end of its turn.
@Suite struct EventLoopCompletionBatchTests {
    /// A longest wait no test reaches: what a test expects of a turn's
    /// order must not depend on how fast the machine runs it (only the
    /// test of the wait itself uses the server's).
    private static let untimed = Duration.seconds(600)

    /// What the channel saw and the test's steps, in order.
    private final class Log: Sendable {
        private let entries = NIOLockedValueBox<[String]>([])
        func append(_ entry: String) { entries.withLockedValue { $0.append(entry) } }
        var all: [String] { entries.withLockedValue { $0 } }
    }

    /// Records every write (by its first byte) and flush that reaches it,
    /// with how many of the limiter's slots are taken at the flush.
    private final class OutboundRecorder: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        let name: String
        let log: Log
        let limiter: InFlightLimiter
        init(_ name: String, log: Log, limiter: InFlightLimiter) {
            self.name = name
            self.log = log
            self.limiter = limiter
        }
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let buffer = unwrapOutboundIn(data)
            log.append("\(name) write \(buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) ?? 0)")
            context.write(data, promise: promise)
        }
        func flush(context: ChannelHandlerContext) {
            log.append("\(name) flush, \(limiter.running) running")
            context.flush()
        }
    }

    /// The handler whose context the answers are written through, as the
    /// save handler's are.
    private final class Answering: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
    }

    /// A connection: a channel whose writes and flushes `log` records, the
    /// context to write through (bound to the channel's loop) and its
    /// in-flight limiter.
    private struct Connection {
        let channel: NIOAsyncTestingChannel
        let context: NIOLoopBound<ChannelHandlerContext>
        let limiter: InFlightLimiter

        /// Takes `count` slots, as requests being answered hold them.
        func take(_ count: Int) {
            for _ in 0..<count { #expect(limiter.tryAcquire()) }
        }
    }

    private func connection(_ name: String, _ log: Log, loop: NIOAsyncTestingEventLoop = NIOAsyncTestingEventLoop(), slots: Int = 16) async throws -> Connection {
        let limiter = InFlightLimiter(limit: slots)
        let kept = NIOLockedValueBox<NIOLoopBound<ChannelHandlerContext>?>(nil)
        let channel = try await NIOAsyncTestingChannel(loop: loop) { channel in
            try channel.pipeline.syncOperations.addHandler(OutboundRecorder(name, log: log, limiter: limiter))
            try channel.pipeline.syncOperations.addHandler(Answering())
            let context = try channel.pipeline.syncOperations.context(handlerType: Answering.self)
            kept.withLockedValue { $0 = NIOLoopBound(context, eventLoop: channel.eventLoop) }
        }
        return Connection(channel: channel, context: try #require(kept.withLockedValue { $0 }), limiter: limiter)
    }

    @Test func completionsSubmittedTogetherRunInOrderWithOneFlushPerConnection() async throws {
        let log = Log()
        let loop = NIOAsyncTestingEventLoop()
        let a = try await connection("a", log, loop: loop)
        let b = try await connection("b", log, loop: loop)
        a.take(2)
        b.take(1)
        let batch = EventLoopCompletionBatch(eventLoop: loop, maximumFlushDelay: Self.untimed)
        // Submitted before the loop runs them: one batch.
        try await loop.executeInContext {
            for (connection, answer) in [(a, UInt8(1)), (b, 2), (a, 3)] {
                batch.submit {
                    log.append("answer \(answer)")
                    batch.write(ByteBuffer(bytes: [answer]), to: connection.context.value, releasing: connection.limiter)
                }
            }
        }
        #expect(log.all.isEmpty)
        await loop.run()
        #expect(log.all == ["answer 1", "a write 1", "answer 2", "b write 2", "answer 3", "a write 3", "a flush, 2 running", "b flush, 1 running"])
        #expect(a.limiter.running == 0)
        #expect(b.limiter.running == 0)
        #expect(try await a.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1]))
        #expect(try await a.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [3]))
        #expect(try await b.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [2]))
        _ = try await a.channel.finish()
        _ = try await b.channel.finish()
    }

    @Test func aWriteOutsideABatchIsFlushedAtOnce() async throws {
        let log = Log()
        let a = try await connection("a", log)
        a.take(1)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        try await a.channel.testingEventLoop.executeInContext {
            batch.write(ByteBuffer(bytes: [7]), to: a.context.value, releasing: a.limiter)
            log.append("returned, \(a.limiter.running) running")
        }
        #expect(log.all == ["a write 7", "a flush, 1 running", "returned, 0 running"])
        _ = try await a.channel.finish()
    }

    @Test func aCompletionSubmittedDuringABatchRunsInTheNextAndEachBatchFlushes() async throws {
        let log = Log()
        let a = try await connection("a", log)
        a.take(2)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        try await a.channel.testingEventLoop.executeInContext {
            batch.submit {
                batch.write(ByteBuffer(bytes: [1]), to: a.context.value, releasing: a.limiter)
                batch.submit {
                    batch.write(ByteBuffer(bytes: [2]), to: a.context.value, releasing: a.limiter)
                }
            }
        }
        await a.channel.testingEventLoop.run()
        #expect(log.all == ["a write 1", "a flush, 2 running", "a write 2", "a flush, 1 running"])
        #expect(a.limiter.running == 0)
        _ = try await a.channel.finish()
    }

    @Test func aConnectionClosedBeforeTheFlushStillGetsItsSlotBack() async throws {
        // The answer cannot leave any more; the slot comes back all the
        // same, so a connection waiting for its slots is not held up.
        let log = Log()
        let a = try await connection("a", log)
        let b = try await connection("b", log, loop: a.channel.testingEventLoop)
        a.take(1)
        b.take(1)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        try await a.channel.testingEventLoop.executeInContext {
            batch.submit {
                batch.write(ByteBuffer(bytes: [1]), to: a.context.value, releasing: a.limiter)
                a.context.value.close(promise: nil)
                batch.write(ByteBuffer(bytes: [2]), to: b.context.value, releasing: b.limiter)
            }
        }
        await a.channel.testingEventLoop.run()
        #expect(a.limiter.running == 0)
        #expect(b.limiter.running == 0)
        #expect(log.all.contains("b flush, 1 running"))
        #expect(try await b.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [2]))
        _ = try await b.channel.finish()
    }

    @Test func answersOfOneTurnAreFlushedTogetherAtItsEnd() async throws {
        // Two connections of one loop answered in one turn: nothing leaves
        // until the turn's I/O is handled, then each is flushed once.
        let log = Log()
        let loop = NIOAsyncTestingEventLoop()
        let a = try await connection("a", log, loop: loop)
        let b = try await connection("b", log, loop: loop)
        let batch = EventLoopCompletionBatch(eventLoop: loop, maximumFlushDelay: Self.untimed)
        try await loop.executeInContext {
            for (connection, answer) in [(a, UInt8(1)), (b, 2), (a, 3)] {
                connection.context.value.write(NIOAny(ByteBuffer(bytes: [answer])), promise: nil)
                batch.flushAtEndOfTurn(connection.context.value)
            }
            log.append("turn ends")
        }
        await loop.run()
        #expect(log.all == ["a write 1", "b write 2", "a write 3", "turn ends", "a flush, 0 running", "b flush, 0 running"])
        #expect(try await a.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [1]))
        #expect(try await a.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [3]))
        #expect(try await b.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [2]))

        // The next turn schedules its own flush.
        try await loop.executeInContext {
            a.context.value.write(NIOAny(ByteBuffer(bytes: [4])), promise: nil)
            batch.flushAtEndOfTurn(a.context.value)
        }
        await loop.run()
        #expect(log.all.suffix(2) == ["a write 4", "a flush, 0 running"])
        _ = try await a.channel.finish()
        _ = try await b.channel.finish()
    }

    @Test func aTurnWithManyConnectionsFlushesThemInGroups() async throws {
        // The client reads the first group while the loop answers the rest.
        let log = Log()
        let loop = NIOAsyncTestingEventLoop()
        let count = EventLoopCompletionBatch.maximumWaiting + 1
        var connections: [Connection] = []
        for index in 0..<count { connections.append(try await connection("c\(index)", log, loop: loop)) }
        // Grouped by count alone, however slowly the test runs.
        let batch = EventLoopCompletionBatch(eventLoop: loop, maximumFlushDelay: Self.untimed)
        let all = connections
        try await loop.executeInContext {
            for (index, connection) in all.enumerated() {
                connection.context.value.write(NIOAny(ByteBuffer(bytes: [UInt8(index)])), promise: nil)
                batch.flushAtEndOfTurn(connection.context.value)
            }
            log.append("turn ends")
        }
        await loop.run()
        let group = (0..<(count - 1)).map { "c\($0) write \($0)" } + (0..<(count - 1)).map { "c\($0) flush, 0 running" }
        #expect(log.all == group + ["c\(count - 1) write \(count - 1)", "turn ends", "c\(count - 1) flush, 0 running"])
        for connection in connections { _ = try await connection.channel.finish() }
    }

    @Test func answersThatWaitedPastTheDelayLeaveBeforeTheTurnEnds() async throws {
        // A long turn: an answer written, then more than the longest wait
        // spent before the next one; the next one's flush takes both.
        let log = Log()
        let loop = NIOAsyncTestingEventLoop()
        let a = try await connection("a", log, loop: loop)
        let b = try await connection("b", log, loop: loop)
        let batch = EventLoopCompletionBatch(eventLoop: loop)
        let delay = EventLoopCompletionBatch.maximumFlushDelay
        try await loop.executeInContext {
            a.context.value.write(NIOAny(ByteBuffer(bytes: [1])), promise: nil)
            batch.flushAtEndOfTurn(a.context.value)
            // At least the delay passes (on the loop, as a long turn's work would).
            let until = ContinuousClock.now + delay + .milliseconds(1)
            while ContinuousClock.now < until {}
            b.context.value.write(NIOAny(ByteBuffer(bytes: [2])), promise: nil)
            batch.flushAtEndOfTurn(b.context.value)
            log.append("turn ends")
        }
        await loop.run()
        #expect(log.all == ["a write 1", "b write 2", "a flush, 0 running", "b flush, 0 running", "turn ends"])
        _ = try await a.channel.finish()
        _ = try await b.channel.finish()
    }

    @Test func aTurnFlushAskedDuringABatchWaitsForTheBatchsFlush() async throws {
        let log = Log()
        let a = try await connection("a", log)
        let b = try await connection("b", log, loop: a.channel.testingEventLoop)
        a.take(1)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        try await a.channel.testingEventLoop.executeInContext {
            batch.submit {
                batch.write(ByteBuffer(bytes: [1]), to: a.context.value, releasing: a.limiter)
                b.context.value.write(NIOAny(ByteBuffer(bytes: [2])), promise: nil)
                batch.flushAtEndOfTurn(b.context.value)
                log.append("batch ends")
            }
        }
        await a.channel.testingEventLoop.run()
        #expect(log.all == ["a write 1", "b write 2", "batch ends", "a flush, 1 running", "b flush, 0 running"])
        #expect(a.limiter.running == 0)
        _ = try await a.channel.finish()
        _ = try await b.channel.finish()
    }

    @Test func aConnectionClosedBeforeTheTurnEndsIsPassedOver() async throws {
        let log = Log()
        let a = try await connection("a", log)
        let b = try await connection("b", log, loop: a.channel.testingEventLoop)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        try await a.channel.testingEventLoop.executeInContext {
            a.context.value.write(NIOAny(ByteBuffer(bytes: [1])), promise: nil)
            batch.flushAtEndOfTurn(a.context.value)
            a.context.value.close(promise: nil)
            b.context.value.write(NIOAny(ByteBuffer(bytes: [2])), promise: nil)
            batch.flushAtEndOfTurn(b.context.value)
        }
        await a.channel.testingEventLoop.run()
        #expect(log.all.contains("b flush, 0 running"))
        #expect(try await b.channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(bytes: [2]))
        _ = try await b.channel.finish()
    }

    @Test func completionsFromOtherThreadsAllRun() async throws {
        // However submits from many threads interleave with the loop's
        // batches, every completion runs once and every slot comes back.
        let log = Log()
        let count = 200
        let a = try await connection("a", log, slots: count)
        let batch = EventLoopCompletionBatch(eventLoop: a.channel.eventLoop, maximumFlushDelay: Self.untimed)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    for index in 0..<(count / 4) {
                        #expect(a.limiter.tryAcquire())
                        batch.submit {
                            log.append("answer \(thread).\(index)")
                            batch.write(ByteBuffer(bytes: [UInt8(thread)]), to: a.context.value, releasing: a.limiter)
                        }
                    }
                }
            }
        }
        await a.channel.testingEventLoop.run()
        let answers = log.all.filter { $0.hasPrefix("answer ") }
        #expect(answers.count == count)
        #expect(Set(answers).count == count)
        // Each thread's completions ran in the order it submitted them.
        for thread in 0..<4 {
            #expect(answers.filter { $0.hasPrefix("answer \(thread).") } == (0..<(count / 4)).map { "answer \(thread).\($0)" })
        }
        #expect(log.all.filter { $0.hasPrefix("a write ") }.count == count)
        #expect(a.limiter.running == 0)
        _ = try await a.channel.finish()
    }
}
