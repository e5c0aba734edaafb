import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
@testable import StrataServer

/// Values kept per event loop: one for each loop, made once.
@Suite struct PerEventLoopTests {
    private final class Counted: Sendable {
        let loop: ObjectIdentifier
        init(_ loop: any EventLoop) { self.loop = ObjectIdentifier(loop) }
    }

    @Test func eachLoopHasItsOwnValueMadeOnce() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let made = NIOLockedValueBox(0)
        let values = PerEventLoop { loop in
            made.withLockedValue { $0 += 1 }
            return Counted(loop)
        }
        let loops = Array(group.makeIterator())
        #expect(loops.count == 2)
        // Asked for from each loop's own thread, several times.
        var seen: [[ObjectIdentifier]] = []
        for loop in loops {
            let identities = try await loop.submit {
                (0..<3).map { _ in ObjectIdentifier(values.value(on: loop)) }
            }.get()
            seen.append(identities)
            #expect(values.value(on: loop).loop == ObjectIdentifier(loop))
        }
        #expect(Set(seen[0]).count == 1 && Set(seen[1]).count == 1)
        #expect(seen[0][0] != seen[1][0])
        #expect(made.withLockedValue { $0 } == 2)
        try await group.shutdownGracefully()
    }

    @Test func theServerKeepsAFetchPlanCachePerLoop() async throws {
        let container = try await sampleInMemoryContainer()
        let core = quietCore(container.coordinator)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = Array(group.makeIterator())
        let first = core.fetchPlans.value(on: loops[0]), second = core.fetchPlans.value(on: loops[1])
        #expect(first !== second)
        #expect(core.fetchPlans.value(on: loops[0]) === first)
        try await group.shutdownGracefully()
        try await container.close()
    }
}
