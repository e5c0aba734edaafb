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
        let closer = Task { await queue.waitUntilIdle() }
        // The drain writes what it took, then finds nothing: the closer goes on.
        #expect(queue.nextGroup()?.count == 1)
        #expect(queue.nextGroup() == nil)
        await closer.value
        #expect(queue.append(save()) == .closed)
    }
}
