import Foundation
import StrataModel
import StrataWire
import SwiftProtobuf
import Testing

/// Strata's error codes as wire statuses, with their conflicts and
/// property failures.
@Suite("Status mapping")
struct StatusMappingTests {
    @Test("Error codes map to the documented statuses", arguments: [
        (133_020, Strata_V1_StatusCode.aborted),
        (133_021, .alreadyExists),
        (133_000, .notFound),
        (1570, .invalidArgument),
        (1550, .invalidArgument),
        (1560, .invalidArgument),
        (1610, .invalidArgument),
        (1680, .invalidArgument),
        (1600, .failedPrecondition),
        (133_010, .invalidArgument),
        (134_020, .failedPrecondition),
        (134_030, .internal),
        (134_080, .unavailable),
        (134_090, .unavailable),
        (134_100, .failedPrecondition),
        (134_301, .outOfRange),
        (140_001, .failedPrecondition),
        (140_002, .failedPrecondition),
        (140_100, .invalidArgument),
        (140_101, .invalidArgument),
        (140_102, .invalidArgument),
        (140_103, .invalidArgument),
        (140_104, .invalidArgument),
    ])
    func codeToStatus(raw: Int, expected: Strata_V1_StatusCode) throws {
        let code = StrataError.Code(rawValue: raw)
        #expect(code.statusCode == expected)
        let status = StrataError(code, "message \(raw)", details: ["one", "two"]).status
        #expect(status.code == expected)
        #expect(status.strataCode == Int32(raw))
        #expect(status.message == "message \(raw)")
        #expect(status.details == ["one", "two"])
        // And it survives the trip through protobuf bytes.
        let bytes: [UInt8] = try status.serializedBytes()
        #expect(try Strata_V1_Status(serializedBytes: bytes) == status)
    }

    static let bookID = ObjectID(storeIdentifier: "STORE-1", entityName: "Book", key: .permanent(12))

    @Test("A merge conflict carries every conflict with both states and versions")
    func conflicts() throws {
        let updated = ConflictRecord(
            objectID: Self.bookID,
            expectedVersion: 2,
            currentVersion: 3,
            cachedValues: ["title": .string("Old"), "pages": .integer(10)],
            persistedValues: ["title": .string("Theirs"), "pages": .integer(10)],
            localChanges: ["title": .string("Mine")]
        )
        let deletedID = ObjectID(storeIdentifier: "STORE-1", entityName: "Book", key: .permanent(13))
        let deleted = ConflictRecord(
            objectID: deletedID,
            expectedVersion: 5,
            currentVersion: 0,
            cachedValues: ["price": .decimal(Decimal(string: "1.10")!)],
            persistedValues: nil,
            localChanges: ["price": .decimal(Decimal(string: "2.20")!)]
        )
        let status = StrataError(.mergeConflict, "2 conflicts", conflicts: [updated, deleted]).status
        #expect(status.code == .aborted)
        #expect(status.strataCode == 133_020)
        try #require(status.conflicts.count == 2)

        let first = status.conflicts[0]
        #expect(first.objectID == Self.bookID.uriRepresentation)
        #expect(first.expectedVersion == 2)
        #expect(first.currentVersion == 3)
        #expect(first.persistedDeleted == false)
        #expect(first.cachedValues == ["title": PropertyValue.string("Old").wire, "pages": PropertyValue.integer(10).wire])
        #expect(first.persistedValues == ["title": PropertyValue.string("Theirs").wire, "pages": PropertyValue.integer(10).wire])
        #expect(first.localChanges == ["title": PropertyValue.string("Mine").wire])

        let second = status.conflicts[1]
        #expect(second.objectID == deletedID.uriRepresentation)
        #expect(second.currentVersion == 0)
        #expect(second.persistedDeleted)
        #expect(second.persistedValues.isEmpty)
        #expect(second.localChanges["price"]?.decimal == "2.2")
        #expect(second.cachedValues["price"]?.decimal == "1.1")
    }

    @Test("Validation errors carry one property error per failing property")
    func propertyFailures() throws {
        let temporary = ObjectID(storeIdentifier: "", entityName: "Book", key: .temporary(UUID(uuidString: "11111111-2222-3333-4444-555555555555")!))
        let failures = [
            PropertyFailure(objectID: temporary, entityName: "Book", property: "title", code: .validationMissingMandatoryProperty, message: "Book.title is mandatory"),
            PropertyFailure(objectID: Self.bookID, entityName: "Book", property: "pages", code: .validationNumberTooLarge, message: "Book.pages is too large"),
        ]
        let status = StrataError(.multipleValidationErrors, "2 validation errors", failures: failures).status
        #expect(status.code == .invalidArgument)
        #expect(status.strataCode == 1560)
        #expect(status.propertyErrors.count == 2)
        #expect(status.propertyErrors.map(\.property) == ["title", "pages"])
        #expect(status.propertyErrors.map(\.entity) == ["Book", "Book"])
        #expect(status.propertyErrors.map(\.strataCode) == [1570, 1610])
        #expect(status.propertyErrors.map(\.objectID) == [temporary.uriRepresentation, Self.bookID.uriRepresentation])
        #expect(status.propertyErrors[0].message == "Book.title is mandatory")

        let single = StrataError(.validationMissingMandatoryProperty, "Book.title is mandatory", failures: [failures[0]]).status
        #expect(single.code == .invalidArgument)
        #expect(single.strataCode == 1570)
        #expect(single.propertyErrors.first?.property == "title")
    }

    @Test("A WireError's status carries its code, Strata code and message")
    func wireErrorStatus() {
        let error = WireError(.resourceExhausted, "frame at byte offset 5: too big", strataCode: 140_104)
        let status = error.status
        #expect(status.code == .resourceExhausted)
        #expect(status.strataCode == 140_104)
        #expect(status.message == "frame at byte offset 5: too big")
        #expect(error.description.contains("too big"))
        #expect(WireError(.invalidArgument, "x").status.strataCode == 0)
    }
}
