import Synchronization
import Testing
import StrataModel
@testable import StrataStore
@testable import StrataSQLite

/// The save queue decides, under its lock, whether a save is taken: once
/// closed it refuses every save, and the saves taken before are drained
/// before a closer waiting for it goes on.
@Suite struct SQLiteSaveQueueTests {
    private func save() -> PendingSave {
        PendingSave(changes: StoreChanges(), feed: nil, completion: { _ in })
    }

    @Test func theFirstSaveStartsTheDrainAndLaterOnesQueueBehindIt() {
        let queue = SQLiteSaveQueue()
        #expect(queue.append(save()) == .startDrain)
        #expect(queue.append(save()) == .queued)
        #expect(queue.count == 2)
        #expect(queue.isDraining)
        #expect(queue.nextGroup()?.count == 2)
        #expect(queue.nextGroup() == nil)
        #expect(!queue.isDraining)
        #expect(queue.append(save()) == .startDrain)
    }

    @Test func aClosedQueueRefusesSavesAndItsCloserWaitsForTheTakenOnes() async {
        let queue = SQLiteSaveQueue()
        #expect(queue.append(save()) == .startDrain)
        queue.close()
        #expect(queue.append(save()) == .closed)
        #expect(queue.count == 1, "a refused save is not queued")
        let closed = Atomic<Bool>(false)
        let closer = Task {
            await queue.waitUntilIdle()
            closed.store(true, ordering: .sequentiallyConsistent)
        }
        // The closer waits while the taken save is not written.
        let deadline = ContinuousClock.now + .seconds(20)
        while queue.idleWaiterCount == 0 {
            #expect(ContinuousClock.now < deadline, "the closer never waited")
            guard ContinuousClock.now < deadline else { return }
            await Task.yield()
        }
        #expect(queue.nextGroup()?.count == 1)
        let closedEarly = closed.load(ordering: .sequentiallyConsistent)
        #expect(!closedEarly, "the closer went on before the drain ended")
        // The drain finds nothing more and ends: the closer goes on.
        #expect(queue.nextGroup() == nil)
        await closer.value
        let closedAtLast = closed.load(ordering: .sequentiallyConsistent)
        #expect(closedAtLast)
        #expect(queue.append(save()) == .closed)
    }
}
