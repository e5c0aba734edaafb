import Dispatch
import NIOCore
import NIOPosix
import Testing
@testable import StrataServer

/// A task that prefers an event loop runs on it, and comes back to it
/// after an await resumed from another thread.
@Suite struct EventLoopTaskExecutorTests {
    @Test func aTaskPreferringTheLoopRunsOnIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let eventLoop = group.next()
        let executor = EventLoopTaskExecutor(eventLoop)
        let places = await Task(executorPreference: executor) { () -> [Bool] in
            var places = [eventLoop.inEventLoop]
            // Resumed from a dispatch thread, as the store's writer resumes a save.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async { continuation.resume() }
            }
            places.append(eventLoop.inEventLoop)
            return places
        }.value
        #expect(places == [true, true])
        // Without the preference, the same task runs off the loop.
        let elsewhere = await Task { eventLoop.inEventLoop }.value
        #expect(!elsewhere)
        try await group.shutdownGracefully()
    }
}
