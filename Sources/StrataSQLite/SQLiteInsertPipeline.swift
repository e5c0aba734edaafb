import Foundation
import StrataModel
import StrataQuery
import StrataStore

/// Encodes the INSERT rows of one save in chunks of ``chunkRows`` rows,
/// ahead of the writer that binds them.
///
/// When the writer takes a large save's first chunk, a helper thread
/// starts encoding the next ones in order, at most ``aheadLimit`` of them
/// ahead of the writer, so that encoding (text, decimal keys, UUID blobs)
/// runs on another core while SQLite executes the rows already encoded
/// (a save that never reaches its inserts starts no thread). The writer
/// never waits for the helper's work that has not started: a chunk the
/// helper has not claimed yet, it encodes itself. A save of at most
/// ``eagerChunks`` chunks is encoded at once, before its transaction
/// begins, with no thread (``eagerFailure``).
///
/// A streamed save (``StoreInsertFeed``) is encoded as its rows are
/// supplied: whoever encodes a chunk waits for its rows, and the helper
/// starts only once every row was supplied (until then the supplier keeps
/// the other core busy). Nothing of it is encoded before the transaction.
///
/// Memory: at most `aheadLimit + 1` chunk buffers exist at a time, instead
/// of one buffer for every row of the save.
final class SQLiteInsertPipeline: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `source`, `chunkCount`, `rowCount`
    // and `eagerFailure` are immutable and Sendable; every `var` below is
    // read and written only while `condition` is locked (see `take`,
    // `runHelper`, `cancel` and `claimForWriter`), except in `init`, before
    // any other thread can see the object; the buffers handed out leave
    // that state before the lock is released.

    /// Rows per chunk: about 250 KB of cells for a ten-column row, which
    /// stays in the cache between the encoder and the writer.
    static let chunkRows = 1024
    /// Chunks encoded ahead of the writer at most.
    static let aheadLimit = 4
    /// Saves of at most this many chunks are encoded before the transaction.
    static let eagerChunks = 2

    /// What the rows are made from.
    struct Source: Sendable {
        /// The change set's inserts (none when they come from `feed`).
        let inserts: [StoreChanges.Insert]
        /// The inserts of a streamed save, taken as they are supplied.
        let feed: StoreInsertFeed?
        /// The transaction's inserts, for the entity of each.
        let transactionInserts: [SQLiteSaveTransaction.Insert]

        /// How many rows there are.
        var count: Int { feed?.count ?? inserts.count }

        /// Encodes `rows` into one buffer, the rows one after the other
        /// (streamed rows once supplied: see ``StoreInsertFeed``).
        func encode(_ rows: Range<Int>) throws(StrataError) -> [SQLValue] {
            var total = 0
            for i in rows { total += transactionInserts[i].entity.insertColumns.count }
            var cells = SQLiteSaveTransaction.nulls(total)
            var plan: SQLiteInsertPlan?
            var start = 0
            let streamed = try feed?.inserts(rows)
            for i in rows {
                let entity = transactionInserts[i].entity
                let values = streamed?[i - rows.lowerBound].values ?? inserts[i].values
                let layout = values.layout
                if plan?.fits(entity, layout) != true { plan = SQLiteInsertPlan(entity: entity, layout: layout) }
                if streamed != nil { try Self.checkStreamed(values, plan: plan, entity: entity, row: i) }
                try plan?.encode(values, into: &cells, at: start)
                start += entity.insertColumns.count
            }
            return cells
        }

        /// A streamed insert's values: attributes only (its references were
        /// not checked before the transaction, and no to-many comes with it).
        private static func checkStreamed(_ values: PropertyValues, plan: SQLiteInsertPlan?, entity: SQLiteStoreMapping.Entity, row: Int) throws(StrataError) {
            var names: [String] = []
            if let plan {
                for slot in plan.checkedSlots where values[slot: slot] != nil { names.append(plan.layout.names[slot]) }
            }
            for name in values.valuesOutsideLayout.keys {
                if case .attribute? = entity.slot(named: name) { continue }
                names.append(name)
            }
            guard !names.isEmpty else { return }
            throw StrataError(.invalidValue, "streamed insert \(row) of \(entity.name) sets \(names.sorted().joined(separator: ", ")), which is not a persisted attribute: a streamed save carries attribute values only")
        }
    }

    private let source: Source
    /// How many chunks the save's rows make.
    let chunkCount: Int
    private let rowCount: Int
    private let condition = NSCondition()
    /// The first chunk nobody encodes yet.
    private var nextUnclaimed = 0
    /// Chunks the writer has taken.
    private var taken = 0
    /// Chunks encoded and not taken yet.
    private var ready: [Int: Result<[SQLValue], StrataError>] = [:]
    private var cancelled = false
    private var helperStarted = false
    /// For a save encoded at once: the first value that does not fit, which
    /// the save reports before its transaction begins.
    let eagerFailure: StrataError?

    /// A pipeline for `source`; encodes small saves at once (see
    /// ``eagerFailure``), large ones as the writer takes them.
    init(_ source: Source) {
        self.source = source
        let rowCount = source.count
        self.rowCount = rowCount
        chunkCount = (rowCount + Self.chunkRows - 1) / Self.chunkRows
        var failure: StrataError?
        // Streamed rows are not supplied yet: they are encoded as the writer takes them.
        if chunkCount <= Self.eagerChunks, source.feed == nil {
            for chunk in 0..<chunkCount {
                let rows = (chunk * Self.chunkRows)..<min(rowCount, (chunk + 1) * Self.chunkRows)
                let result = Result { () throws(StrataError) in try source.encode(rows) }
                if failure == nil, case .failure(let error) = result { failure = error }
                ready[chunk] = result
            }
            nextUnclaimed = chunkCount
        }
        eagerFailure = failure
    }

    /// The insert indices of a chunk.
    func rows(ofChunk chunk: Int) -> Range<Int> {
        (chunk * Self.chunkRows)..<min(rowCount, (chunk + 1) * Self.chunkRows)
    }

    /// The encoded rows of `chunk`, taken in order (0, 1, 2, …): waits for
    /// the helper when it is encoding that chunk, encodes it here when
    /// nobody has started it. Throws the first value that does not fit its
    /// attribute.
    func take(_ chunk: Int) throws(StrataError) -> [SQLValue] {
        condition.lock()
        if claimForWriter(chunk) {
            // The first chunk of a large save: the helper starts on the
            // next. While a streamed save's rows are still being supplied,
            // their supplier keeps the other core busy: the helper waits
            // until the last row came.
            let startsHelper = !helperStarted && nextUnclaimed < chunkCount && !cancelled && (source.feed?.isComplete ?? true)
            if startsHelper { helperStarted = true }
            condition.unlock()
            if startsHelper {
                let thread = Thread { [self] in runHelper() }
                thread.name = "strata.sqlite.encode"
                thread.start()
            }
            let cells = try source.encode(rows(ofChunk: chunk))
            condition.lock()
            taken = chunk + 1
            condition.broadcast()
            condition.unlock()
            return cells
        }
        while ready[chunk] == nil, !cancelled { condition.wait() }
        let result = ready.removeValue(forKey: chunk)
        taken = chunk + 1
        condition.broadcast()
        condition.unlock()
        guard let result else {
            throw StrataError(.storeSave, "insert encoding was cancelled before chunk \(chunk)")
        }
        return try result.get()
    }

    /// Stops the helper and drops what it encoded (the save is over).
    func cancel() {
        condition.lock()
        cancelled = true
        ready.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// With the lock held: whether the writer encodes `chunk` itself
    /// (nobody has claimed it), claiming it if so.
    private func claimForWriter(_ chunk: Int) -> Bool {
        guard chunk >= nextUnclaimed else { return false }
        nextUnclaimed = chunk + 1
        return true
    }

    /// The helper thread: claims chunks in order and encodes them, staying
    /// at most ``aheadLimit`` chunks ahead of the writer; stops at the end,
    /// at a cancellation or at the first chunk that fails.
    private func runHelper() {
        condition.lock()
        while !cancelled, nextUnclaimed < chunkCount {
            if nextUnclaimed - taken >= Self.aheadLimit {
                condition.wait()
                continue
            }
            let chunk = nextUnclaimed
            nextUnclaimed += 1
            condition.unlock()
            let result = Result { () throws(StrataError) in try source.encode(rows(ofChunk: chunk)) }
            condition.lock()
            if !cancelled { ready[chunk] = result }
            condition.broadcast()
            if case .failure = result { break }
        }
        condition.unlock()
    }
}

extension SQLiteInsertPipeline {
    /// Owns a pipeline for a save: when the save's transaction value goes
    /// away (written, failed, or never run), the helper is stopped.
    final class Owner: Sendable {
        /// The pipeline.
        let pipeline: SQLiteInsertPipeline

        init(_ pipeline: SQLiteInsertPipeline) {
            self.pipeline = pipeline
        }

        deinit {
            pipeline.cancel()
        }
    }
}
