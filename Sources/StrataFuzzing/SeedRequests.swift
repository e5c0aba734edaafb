import Foundation
import StrataModel
import StrataWire

/// Requests that put a few objects in the request target's stores, and
/// that seed its corpus: one of each operation.
public enum SeedRequests {
    /// Inserts three books and two pieces of feedback.
    static let seed = Strata_V1_ClientFrame.with {
        $0.requestID = 1
        $0.save = Strata_V1_SaveRequest.with { save in
            for (i, title) in ["Dune", "NUL\u{0}inside", "Émile"].enumerated() {
                save.inserts.append(Strata_V1_InsertedObject.with {
                    $0.temporaryID = "b\(i)"
                    $0.entity = "Book"
                    $0.values["uuid"] = PropertyValue.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(i + 1)))).wire
                    $0.values["title"] = PropertyValue.string(title).wire
                    $0.values["pages"] = PropertyValue.integer(Int64(100 * (i + 1))).wire
                    $0.values["price"] = PropertyValue.decimal(Decimal(i * 100 + 25) / 100).wire
                })
            }
            for rating in [3, 5] as [Int64] {
                save.inserts.append(Strata_V1_InsertedObject.with {
                    $0.temporaryID = "f\(rating)"
                    $0.entity = "Feedback"
                    $0.values["bookUUID"] = PropertyValue.uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))).wire
                    $0.values["rating"] = PropertyValue.integer(rating).wire
                    $0.values["comment"] = PropertyValue.string("ok").wire
                })
            }
        }
    }

    /// One request of each operation, as `ClientFrame` payloads: the
    /// request target's seed corpus.
    public static func corpus() throws -> [String: [UInt8]] {
        let frames: [String: Strata_V1_ClientFrame] = [
            "ping": .with { $0.requestID = 2; $0.ping = .with { $0.payload = Data("hi".utf8) } },
            "get-model": .with { $0.requestID = 3; $0.getModel = .init() },
            "stats": .with { $0.requestID = 4; $0.stats = .init() },
            "fetch-objects": .with {
                $0.requestID = 5
                $0.fetch = .with {
                    $0.entity = "Book"
                    $0.predicate = "pages > $P AND title BEGINSWITH[cd] 'd'"
                    $0.variables["P"] = .with { $0.value = PropertyValue.integer(50).wire }
                    $0.sort = [.with { $0.key = "title"; $0.caseInsensitive = true }]
                    $0.limit = 2
                    $0.batchSize = 1
                    $0.includeFetched = ["feedbackList"]
                }
            },
            "fetch-count": .with { $0.requestID = 6; $0.fetch = .with { $0.entity = "Feedback"; $0.predicate = "rating >= 3"; $0.resultType = .count } },
            "save-insert": seed,
            "save-update": .with {
                $0.requestID = 7
                $0.save = .with {
                    $0.updates = [.with {
                        $0.id = "strata://00000000-0000-0000-0000-000000000000/Book/p1"
                        $0.baseVersion = 1
                        $0.values["title"] = PropertyValue.string("Dune II").wire
                    }]
                    $0.mergePolicy = .mergeByPropertyObjectTrump
                }
            },
            "refresh": .with { $0.requestID = 8; $0.refresh = .with { $0.ids = ["strata://00000000-0000-0000-0000-000000000000/Book/p1"] } },
            "subscribe": .with { $0.requestID = 9; $0.subscribe = .with { $0.entity = "Book"; $0.predicate = "price < 2" } },
            "history": .with { $0.requestID = 10; $0.history = .with { $0.limit = 5 } },
            "backup": .with { $0.requestID = 11; $0.backup = .with { $0.store = "Book" } },
        ]
        return try frames.mapValues { try $0.serializedBytes() }
    }
}
