import Foundation
import NIOConcurrencyHelpers
import StrataClient
import StrataModel
import StrataWire

/// What the operations act on: the IDs to get, update and refresh, the
/// versions last seen, and the request builders. Two kinds: any model's
/// entity, whose inserts and updates an ``ObjectGenerator`` fills, or the
/// bundled sample's Books (`--workload books`: titled Books with pages,
/// queried by a random 10-page range on the `pages` index).
final class Workload: Sendable {
    let entity: String
    let predicate: String
    /// Makes the inserted and updated values; nil for the Books workload.
    let generator: ObjectGenerator?
    let queryLimit: UInt32
    /// The default query reads the `pages` index in order, so its cost does
    /// not grow with the store.
    let sortsByPages: Bool
    let ids: [String]
    /// Each ID's get (`RefreshRequest{ids: [id], skip_fetched: true}`)
    /// encoded once, so the wire driver frames a get without building and
    /// encoding a message per request (wrk and redis-benchmark likewise
    /// send prepared requests).
    private let encodedGets: [[UInt8]]
    /// The query's `FetchRequest` for each lower bound of its range
    /// (``rangeLows``), encoded once, so the wire driver frames a query as
    /// it frames a get (pgbench likewise sends a prepared statement).
    private let encodedQueries: [[UInt8]]
    /// How many lower bounds the query's 10-value range draws from (1…990).
    private static let rangeLows: UInt64 = 990
    private let versions: NIOLockedValueBox<[String: Int64]>
    /// Told of every acknowledged insert (with `--watch-port`).
    let probe: NotificationProbe?

    /// With `preparesGets`, each ID's get is encoded now (for the wire
    /// driver's gets; nothing else reads them); with `preparesQueries`,
    /// each query of a workload without a generator (the Books').
    init(entity: String, predicate: String, generator: ObjectGenerator? = nil, sortsByPages: Bool, queryLimit: UInt32, ids: [String], versions: [String: Int64],
         preparesGets: Bool = false, preparesQueries: Bool = false, probe: NotificationProbe? = nil) {
        self.probe = probe
        self.entity = entity
        self.generator = generator
        self.predicate = predicate
        self.sortsByPages = sortsByPages
        self.queryLimit = queryLimit
        self.ids = ids
        self.versions = NIOLockedValueBox(versions)
        self.encodedGets = preparesGets ? ids.map { id in
            (try? Strata_V1_RefreshRequest.with { $0.ids = [id]; $0.skipFetched = true }.serializedBytes()) ?? []
        } : []
        self.encodedQueries = preparesQueries && generator == nil ? (1...Int64(Self.rangeLows)).map { low in
            (try? Self.query(entity: entity, predicate: predicate, low: low, limit: queryLimit, sortsByPages: sortsByPages).serializedBytes()) ?? []
        } : []
    }

    /// Whether ``encodedQuery(random:)`` has queries to give.
    var hasEncodedQueries: Bool { !encodedQueries.isEmpty }

    /// A query of a random range, its `FetchRequest` encoded (the same
    /// draw from `random` as ``request(_:random:serial:)`` makes for a
    /// query). Only for a workload made with `preparesQueries`.
    func encodedQuery(random: inout SplitMix64) -> [UInt8] {
        encodedQueries[Int(random.next() % Self.rangeLows)]
    }

    /// A get of a random object, its `RefreshRequest` encoded (the same
    /// draw from `random` as ``request(_:random:serial:)`` makes for a
    /// get). Only for a workload made with `preparesGets`.
    func encodedGet(random: inout SplitMix64) -> [UInt8] {
        encodedGets[Int(random.next() % UInt64(encodedGets.count))]
    }

    /// Seeds `count` Books (each with `feedback` Feedback objects) in saves
    /// of `batch` books, and returns their IDs and versions.
    static func seed(count: Int, feedback: Int, batch: Int = 500, client: StrataClient, progress: (Int) -> Void) async throws -> [String: Int64] {
        var versions: [String: Int64] = [:]
        var random = SplitMix64(seed: 0x5EED)
        var made = 0
        while made < count {
            let size = min(batch, count - made)
            let request = Strata_V1_SaveRequest.with { save in
                for index in made..<(made + size) {
                    let uuid = UUID()
                    save.inserts.append(Strata_V1_InsertedObject.with {
                        $0.temporaryID = "b\(index)"
                        $0.entity = "Book"
                        $0.values["uuid"] = PropertyValue.uuid(uuid).wire
                        $0.values["title"] = PropertyValue.string("Seeded book \(index)").wire
                        $0.values["author"] = PropertyValue.string("Author \(index % 997)").wire
                        $0.values["pages"] = PropertyValue.integer(Int64(random.next() % 1000) + 1).wire
                        $0.values["price"] = PropertyValue.decimal(Decimal(Int(random.next() % 10_000)) / 100).wire
                    })
                    for f in 0..<feedback {
                        save.inserts.append(Strata_V1_InsertedObject.with {
                            $0.temporaryID = "f\(index)-\(f)"
                            $0.entity = "Feedback"
                            $0.values["bookUUID"] = PropertyValue.uuid(uuid).wire
                            $0.values["rating"] = PropertyValue.integer(Int64(random.next() % 5) + 1).wire
                        })
                    }
                }
            }
            let response = try await client.save(request)
            for inserted in response.inserted where inserted.temporaryID.hasPrefix("b") {
                versions[inserted.id] = response.versions[inserted.id] ?? 1
            }
            made += size
            progress(made)
        }
        return versions
    }

    /// Seeds `count` objects the generator makes, in saves of `batch`,
    /// and returns their IDs and versions.
    static func seed(count: Int, generator: ObjectGenerator, batch: Int = 500, client: StrataClient, progress: (Int) -> Void) async throws -> [String: Int64] {
        var versions: [String: Int64] = [:]
        var random = SplitMix64(seed: generator.nonce)
        var made = 0
        while made < count {
            let size = min(batch, count - made)
            let request = Strata_V1_SaveRequest.with { save in
                save.inserts = (made..<(made + size)).map { index in
                    Strata_V1_InsertedObject.with {
                        $0.temporaryID = "s\(index)"
                        $0.entity = generator.entity
                        $0.values = generator.values(random: &random)
                    }
                }
            }
            let response = try await client.save(request)
            for inserted in response.inserted { versions[inserted.id] = response.versions[inserted.id] ?? 1 }
            made += size
            progress(made)
        }
        return versions
    }

    /// The IDs of the objects of `entity` already in the store that
    /// `predicate` selects (at most `limit`), with their versions.
    static func existing(entity: String, predicate: String = "", limit: Int, client: StrataClient) async throws -> [String: Int64] {
        let result = try await client.fetch(Strata_V1_FetchRequest.with {
            $0.entity = entity
            $0.predicate = predicate
            $0.limit = UInt32(clamping: limit)
            $0.resultType = .objects
            $0.batchSize = 2000
        })
        return Dictionary(result.objects.map { ($0.id, $0.version) }, uniquingKeysWith: { first, _ in first })
    }

    /// One operation's request, and the object it targets (for updates,
    /// whose answer teaches the workload the object's new version).
    func request(_ operation: BenchOperation, random: inout SplitMix64, serial: Int) -> (request: Strata_V1_ClientFrame.OneOf_Request, target: String?) {
        switch operation {
        case .get:
            return (.refresh(Strata_V1_RefreshRequest.with {
                $0.ids = [randomID(&random)]
                $0.skipFetched = true
            }), nil)
        case .refresh:
            return (.refresh(Strata_V1_RefreshRequest.with { $0.ids = [randomID(&random)] }), nil)
        case .query:
            let low = generator == nil ? Int64(random.next() % Self.rangeLows) + 1 : nil
            return (.fetch(Self.query(entity: entity, predicate: predicate, low: low, limit: queryLimit, sortsByPages: sortsByPages)), nil)
        case .count:
            return (.fetch(Strata_V1_FetchRequest.with {
                $0.entity = entity
                $0.predicate = predicate
                if generator == nil { $0.variables = rangeVariables(&random) }
                $0.resultType = .count
            }), nil)
        case .insert:
            if let generator {
                return (.save(Strata_V1_SaveRequest.with {
                    $0.inserts = [Strata_V1_InsertedObject.with {
                        $0.temporaryID = "n"
                        $0.entity = generator.entity
                        $0.values = generator.values(random: &random)
                    }]
                }), nil)
            }
            // One source per request here (one read of the system's
            // generator): this path builds a message tree per request anyway.
            var uuids = UUIDSource()
            let insert = insertValues(random: &random, uuids: &uuids, serial: serial)
            return (.save(Strata_V1_SaveRequest.with {
                $0.inserts = [Strata_V1_InsertedObject.with {
                    $0.temporaryID = "n"
                    $0.entity = "Book"
                    $0.values["uuid"] = PropertyValue.uuid(insert.uuid).wire
                    $0.values["title"] = PropertyValue.string(insert.title).wire
                    $0.values["pages"] = PropertyValue.integer(insert.pages).wire
                }]
            }), nil)
        case .update:
            let id = randomID(&random)
            let base = versions.withLockedValue { $0[id] ?? 0 }
            return (.save(Strata_V1_SaveRequest.with {
                $0.updates = [Strata_V1_UpdatedObject.with {
                    $0.id = id
                    $0.baseVersion = base
                    if let generator, let attribute = generator.updatable {
                        $0.values[attribute.name] = generator.value(attribute, number: generator.counter.next(), random: &random).wire
                    } else {
                        $0.values["pages"] = PropertyValue.integer(Int64(random.next() % 1000) + 1).wire
                    }
                }]
            }), id)
        }
    }

    /// The values of insert number `serial` (a new UUID from `uuids`, a
    /// title naming the serial, pages drawn from `random`), for the request
    /// built here and the one the wire driver frames by hand.
    func insertValues(random: inout SplitMix64, uuids: inout UUIDSource, serial: Int) -> (uuid: UUID, title: String, pages: Int64) {
        (uuids.next(), "Bench book \(serial)", Int64(random.next() % 1000) + 1)
    }

    /// Learns from a save's answer: the updated object's new version, the
    /// inserted IDs for the notification probe.
    func saved(_ response: Strata_V1_SaveResponse, target: String?) {
        probe?.acknowledged(response.inserted.map(\.id))
        if let target, let version = response.versions[target] {
            versions.withLockedValue { $0[target] = max($0[target] ?? 0, version) }
        }
    }

    /// Learns the current version from a refused update (a conflict is
    /// counted, not hidden; the next update of the object starts from it).
    func refused(_ conflicts: [Strata_V1_Conflict], target: String?) {
        guard let target, let current = conflicts.first?.currentVersion else { return }
        versions.withLockedValue { $0[target] = max($0[target] ?? 0, current) }
    }

    /// Performs one operation through the client library.
    func perform(_ operation: BenchOperation, client: StrataClient, random: inout SplitMix64, serial: Int) async throws {
        let (request, target) = request(operation, random: &random, serial: serial)
        try await send(request, target: target, client: client)
    }

    /// Sends one request built by ``request(_:random:serial:)`` through the
    /// client library and learns from its answer.
    func send(_ request: Strata_V1_ClientFrame.OneOf_Request, target: String?, client: StrataClient) async throws {
        do {
            switch request {
            case .refresh(let refresh):
                _ = try await client.refresh(refresh.ids, includeFetched: refresh.includeFetched, includeRelationships: refresh.includeRelationships, skipFetched: refresh.skipFetched)
            case .fetch(let fetch):
                _ = try await client.fetch(fetch)
            case .save(let save):
                saved(try await client.save(save), target: target)
            default:
                throw StrataClientError(.internal, "strata-bench built a request it cannot send: \(request)")
            }
        } catch let error as StrataClientError {
            refused(error.conflicts, target: target)
            throw error
        }
    }

    /// `$LOW` and `$HIGH`: a random 10-page range.
    /// The query: `predicate` over `entity`, with `$LOW` and `$HIGH`
    /// (`low` + 10) when `low` is given.
    private static func query(entity: String, predicate: String, low: Int64?, limit: UInt32, sortsByPages: Bool) -> Strata_V1_FetchRequest {
        Strata_V1_FetchRequest.with {
            $0.entity = entity
            $0.predicate = predicate
            if let low { $0.variables = rangeVariables(low: low) }
            $0.limit = limit
            if sortsByPages { $0.sort = [Strata_V1_SortKey.with { $0.key = "pages" }] }
        }
    }

    private func rangeVariables(_ random: inout SplitMix64) -> [String: Strata_V1_VariableValue] {
        Self.rangeVariables(low: Int64(random.next() % Self.rangeLows) + 1)
    }

    private static func rangeVariables(low: Int64) -> [String: Strata_V1_VariableValue] {
        [
            "LOW": Strata_V1_VariableValue.with { $0.value = PropertyValue.integer(low).wire },
            "HIGH": Strata_V1_VariableValue.with { $0.value = PropertyValue.integer(low + 10).wire },
        ]
    }

    private func randomID(_ random: inout SplitMix64) -> String {
        ids[Int(random.next() % UInt64(ids.count))]
    }
}
