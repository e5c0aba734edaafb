import Foundation
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite

/// The predicate language end to end: the input is predicate text, parsed
/// (its description must parse back to itself), resolved against each of
/// ``FuzzModel``'s main entities with ``FuzzModel/variables``, and fetched
/// from an SQLite store and an in-memory store holding the same objects.
/// The in-memory store's evaluator is the reference: both must select the
/// same objects, or both refuse the fetch (SQLite may also refuse one that
/// is beyond its limits, with 140102).
enum PredicateTarget {
    /// Inputs longer than this are cut: the parser's speed on long text is
    /// the abuse tests' concern, not the fuzzer's.
    static let maximumLength = 4096

    /// The two stores, opened once per process.
    private actor Stores {
        private var opened: (memory: any PersistentStore, sqlite: any PersistentStore)?

        func get() async throws -> (memory: any PersistentStore, sqlite: any PersistentStore) {
            if let opened { return opened }
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("strata-fuzz-predicate-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let memory = try await InMemoryStore(description: .inMemory(), model: FuzzModel.model)
            let sqlite = try await SQLiteStore(
                description: StoreDescription(url: directory.appendingPathComponent("fuzz.sqlite"), type: .sqlite, tracksHistory: false),
                model: FuzzModel.model
            )
            for store in [memory, sqlite] as [any PersistentStore] {
                _ = try await store.save(PredicateDataset.changes())
            }
            opened = (memory, sqlite)
            return (memory, sqlite)
        }
    }

    private static let stores = Stores()
    private static let entities = ["Sample", "Author", "Book", "Chapter"]

    static func run(_ input: [UInt8]) async throws(FuzzFinding) {
        let text = String(decoding: input.prefix(maximumLength), as: UTF8.self)
        let predicate: StrataQuery.Predicate
        do {
            predicate = try PredicateParser.parse(text)
        } catch {
            return
        }
        let description = predicate.description
        do {
            let again = try PredicateParser.parse(description)
            guard again.description == description else {
                throw FuzzFinding(.predicate, "the description '\(description)' parses as '\(again.description)'")
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding(.predicate, "the description '\(description)' of '\(text)' does not parse: \(error)")
        }
        let opened: (memory: any PersistentStore, sqlite: any PersistentStore)
        do {
            opened = try await stores.get()
        } catch {
            throw FuzzFinding(.predicate, "the stores did not open: \(error)")
        }
        let resolver = PredicateResolver(model: FuzzModel.model)
        for entity in entities {
            let fetch: ResolvedFetch
            do {
                fetch = try resolver.resolve(FetchRequest(entityName: entity, predicate: predicate), variables: FuzzModel.variables)
            } catch {
                continue
            }
            let expected = await selection(opened.memory, fetch)
            let actual = await selection(opened.sqlite, fetch)
            switch (expected, actual) {
            case (.success(let a), .success(let b)):
                guard a == b else {
                    throw FuzzFinding(.predicate, "'\(text)' on \(entity): the evaluator selects \(a.sorted()), SQLite \(b.sorted())")
                }
            case (.failure, .failure):
                continue
            case (.success, .failure(let error)):
                if let error = error as? StrataError, error.code == .unsupported { continue }
                throw FuzzFinding(.predicate, "'\(text)' on \(entity): SQLite fails where the evaluator does not: \(error)")
            case (.failure(let error), .success):
                throw FuzzFinding(.predicate, "'\(text)' on \(entity): the evaluator fails where SQLite does not: \(error)")
            }
        }
    }

    /// The primary keys a fetch selects (entity and key), or its error.
    private static func selection(_ store: any PersistentStore, _ fetch: ResolvedFetch) async -> Result<Set<String>, any Error> {
        do {
            let ids = try await store.fetchObjectIDs(fetch)
            return .success(Set(ids.map { "\($0.entityName)/\($0.primaryKey.map(String.init) ?? "?")" }))
        } catch {
            return .failure(error)
        }
    }
}
