import StrataModel
import StrataStore

extension Context {
    /// Saves of at least this many new objects, and nothing else, into one
    /// store that streams inserts (``InsertStreamingStore``) are written
    /// while they are prepared.
    public static let streamingSaveThreshold = 4096
    /// Objects prepared (derived values, validation) and supplied at a time.
    static let streamingChunk = 1024

    /// A large save of new objects into one streaming store: the store
    /// begins its transaction and writes each chunk while the next is
    /// prepared, instead of waiting for every object to be derived,
    /// validated and planned. The answers are the usual save's: one
    /// validation problem anywhere stops the stream (the store writes
    /// nothing) and the whole save is validated again for the complete
    /// error.
    ///
    /// Eligible: every changed object inserted, into the same store, with
    /// no relationship (its entity can hold no object ID) and no to-many
    /// change. Returns nil, for the caller to save the usual way, when the
    /// save is not eligible; after the store answered with conflicts
    /// (resolved by the merge policy); when work that ran while a chunk
    /// awaited changed the objects still to supply; and when a validation
    /// problem stopped the stream but the whole save then validates.
    func saveStreamingIfEligible() async throws -> ChangeSet? {
        let objects = graph.changedObjects
        // Guarded saves (access rules) take the checked route.
        guard saveGuards == nil, objects.count >= Self.streamingSaveThreshold, let storeID = objects.first?.storeIdentifier else { return nil }
        var lastEntity = ""
        for object in objects {
            guard object.isInserted, !object.isDeleted, object.storeIdentifier == storeID, object.toManyChanges.isEmpty else { return nil }
            if object.entityName != lastEntity {
                guard !graph.layout(of: object).holdsObjectIDs else { return nil }
                lastEntity = object.entityName
            }
        }
        guard let store = coordinator.store(identifier: storeID) as? any InsertStreamingStore, !store.isReadOnly else { return nil }

        let feed = StoreInsertFeed(temporaryIDs: objects.map(\.objectID))
        let changes = StoreChanges(checksVersions: mergePolicy != .overwrite, author: transactionAuthor, contextName: name)
        async let answer = store.save(changes, streaming: feed)
        // Completes or fails the feed in every case: the store waits for it.
        let prepared = await supply(objects, to: feed)
        let result: StoreSaveResult
        do {
            result = try await answer
        } catch {
            switch prepared {
            case .success:
                throw StrataError.storeFailure(error, in: store, committed: [])
            case .failure(.invalid):
                // The store wrote nothing; the whole save's problems.
                try await prepareForSave()
                return nil
            case .failure(.changed):
                return nil
            case .failure(.failed(let preparing)):
                throw preparing
            }
        }
        guard case .success(let planned) = prepared, let supplied = feed.completeInserts else {
            // Unreachable (a failed feed fails the save); answered as if so.
            try await prepareForSave()
            return nil
        }
        switch result {
        case .committed(let commit):
            var written = changes
            written.inserts = supplied
            let unit = StoreSaveUnit(store: store, changes: written, insertedObjects: planned)
            let changeSet = finishSave([(unit, commit)])
            coordinator.changes.publish(changeSet)
            return changeSet
        case .constraintConflicts(let conflicts):
            try await resolve(conflicts)
            return nil
        case .conflicts:
            return nil
        }
    }

    /// Why preparing a streamed save's inserts stopped.
    enum StreamPreparation: Error {
        /// An object failed validation (the problems are found again).
        case invalid
        /// Deriving a value (or loading what it needs) threw.
        case failed(any Error)
        /// Work that ran while the context awaited deleted an object or
        /// saved it elsewhere: the save starts again the usual way.
        case changed
    }

    /// Recomputes derived values, validates and supplies `objects` chunk by
    /// chunk; on any failure fails the feed instead. Never leaves the feed
    /// open. Returns the objects with their change generation when supplied.
    private func supply(_ objects: [ManagedObject], to feed: StoreInsertFeed) async -> Result<[(object: ManagedObject, generation: UInt64)], StreamPreparation> {
        var planned: [(object: ManagedObject, generation: UInt64)] = []
        planned.reserveCapacity(objects.count)
        var start = 0
        while start < objects.count {
            let chunk = Array(objects[start..<min(objects.count, start + Self.streamingChunk)])
            do {
                try await recomputeDerivedAttributes(of: chunk)
                guard try await validationProblems(of: chunk).isEmpty else {
                    feed.fail(StrataError(.storeSave, "the save was stopped: an object failed validation"))
                    return .failure(.invalid)
                }
            } catch {
                feed.fail(StrataError(.storeSave, "the save was stopped while preparing its inserts: \(error)"))
                return .failure(.failed(error))
            }
            // The feed names every object up front: a chunk whose objects
            // are no longer those new objects (deleted, saved or reset away
            // while a derivation awaited) stops it. Earlier chunks are
            // written as supplied, as the usual save writes what it planned.
            for (offset, object) in chunk.enumerated() {
                guard object.isInserted, !object.isDeleted, object.isRegistered, object.objectID == feed.temporaryIDs[start + offset] else {
                    feed.fail(StrataError(.storeSave, "the save was stopped: its objects changed while it was prepared"))
                    return .failure(.changed)
                }
            }
            var inserts: [StoreChanges.Insert] = []
            inserts.reserveCapacity(chunk.count)
            for object in chunk {
                // The changes (persisted keys only), shared, not copied.
                inserts.append(StoreChanges.Insert(temporaryID: object.objectID, values: object.changes))
                planned.append((object, object.changeGeneration))
            }
            guard feed.supply(inserts) else { return .failure(.changed) }
            start += chunk.count
        }
        return .success(planned)
    }
}
