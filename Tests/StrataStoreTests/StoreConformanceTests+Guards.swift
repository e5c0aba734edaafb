import Foundation
import Testing
import StrataModel
import StrataQuery
@testable import StrataStore

/// Guards (access rules) are checked by every store inside the save:
/// before the writes on the stored rows, after them on the rows as the
/// save leaves them; a violated guard fails the save with 140201 and
/// nothing of it is written.
extension StoreConformanceTests {
    /// A guard whose violations are the objects where `str` is not `owner`
    /// (nil included).
    static func ownerGuard(_ phase: StoreGuard.Phase, _ ids: [ObjectID], owner: String = "me") throws -> StoreGuard {
        StoreGuard(phase: phase, objectIDs: ids, violation: try F.fetch("Sample", "NOT (str == '\(owner)')"), message: "Sample: not yours")
    }

    @Test(arguments: StoreKind.allCases)
    func guardsAreCheckedInsideTheSave(_ kind: StoreKind) async throws {
        try await TestDirectory.with { directory in
            let store = try await F.open(kind, in: directory)
            let mine = ObjectID.temporary(entityName: "Sample"), theirs = ObjectID.temporary(entityName: "Sample"), nobodys = ObjectID.temporary(entityName: "Sample")
            let seeded = try await F.commit(store, StoreChanges(inserts: [
                .init(temporaryID: mine, values: ["str": .string("me"), "i64": .integer(1)]),
                .init(temporaryID: theirs, values: ["str": .string("them"), "i64": .integer(2)]),
                .init(temporaryID: nobodys, values: ["i64": .integer(3)]),
            ]))
            let (myID, theirID, nobodyID) = (try #require(seeded.permanentIDs[mine]), try #require(seeded.permanentIDs[theirs]), try #require(seeded.permanentIDs[nobodys]))

            func denied(_ changes: StoreChanges) async -> Bool {
                do {
                    _ = try await store.save(changes)
                    return false
                } catch let error as StrataError {
                    return error.code == .accessDenied && error.message == "Sample: not yours"
                } catch {
                    return false
                }
            }
            // After: an insert must satisfy it as inserted (nil does not).
            let good = ObjectID.temporary(entityName: "Sample"), bad = ObjectID.temporary(entityName: "Sample"), unset = ObjectID.temporary(entityName: "Sample")
            var insert = StoreChanges(inserts: [.init(temporaryID: good, values: ["str": .string("me")]), .init(temporaryID: bad, values: ["str": .string("them")])])
            insert.guards = [try Self.ownerGuard(.after, [good, bad])]
            #expect(await denied(insert))
            var insertUnset = StoreChanges(inserts: [.init(temporaryID: unset, values: ["i64": .integer(9)])])
            insertUnset.guards = [try Self.ownerGuard(.after, [unset])]
            #expect(await denied(insertUnset))
            #expect(try await store.count(F.all("Sample")) == 3, "nothing of a refused save is written")
            insert.inserts.removeLast()
            insert.guards = [try Self.ownerGuard(.after, [good])]
            try await F.commit(store, insert)

            // Before: an update or delete must satisfy it as stored.
            var update = StoreChanges(updates: [.init(objectID: theirID, expectedVersion: 1, values: ["str": .string("me")])])
            update.guards = [try Self.ownerGuard(.before, [theirID])]
            #expect(await denied(update))
            var delete = StoreChanges(deletes: [.init(objectID: nobodyID, expectedVersion: 1)])
            delete.guards = [try Self.ownerGuard(.before, [nobodyID])]
            #expect(await denied(delete))
            // After on an update: it may not move the object out of the rule.
            var away = StoreChanges(updates: [.init(objectID: myID, expectedVersion: 1, values: ["str": .string("them")])])
            away.guards = [try Self.ownerGuard(.before, [myID]), try Self.ownerGuard(.after, [myID])]
            #expect(await denied(away))
            #expect(try await F.snapshot(store, myID)["str"] == .string("me"))
            #expect(try await F.snapshot(store, theirID)["str"] == .string("them"))
            #expect(try await store.count(F.all("Sample")) == 4)
            // Satisfied both ways: written.
            var fine = StoreChanges(updates: [.init(objectID: myID, expectedVersion: 1, values: ["i64": .integer(10)])])
            fine.guards = [try Self.ownerGuard(.before, [myID]), try Self.ownerGuard(.after, [myID])]
            try await F.commit(store, fine)
            #expect(try await F.snapshot(store, myID)["i64"] == .integer(10))
            try await store.close()
        }
    }
}
