import Foundation
import GRDB
import StrataModel

/// Encodes the INSERT rows of one save in chunks of ``chunkRows`` rows,
/// ahead of the writer that binds them.
///
/// A large save starts a helper thread that encodes the chunks in order,
/// at most ``aheadLimit`` of them ahead of the writer, so that encoding
/// (text, decimal keys, UUID blobs) runs on another core while SQLite
/// executes the rows already encoded. The writer never waits for work that
/// has not started: a chunk the helper has not claimed yet, it encodes
/// itself. A save of at most ``eagerChunks`` chunks is encoded at once,
/// before its transaction begins, with no thread.
///
/// Memory: at most `aheadLimit + 1` chunk buffers exist at a time, instead
/// of one buffer for every row of the save.
final class SQLiteInsertPipeline: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `source` and `chunkCount` are
    // immutable and Sendable; every `var` below is read and written only
    // while `condition` is locked (see `take`, `runHelper`, `cancel` and
    // `claimForWriter`), and the buffers handed out leave that state before
    // the lock is released.

    /// Rows per chunk: about 250 KB of cells for a ten-column row, which
    /// stays in the cache between the encoder and the writer.
    static let chunkRows = 1024
    /// Chunks encoded ahead of the writer at most.
    static let aheadLimit = 4
    /// Saves of at most this many chunks are encoded before the transaction.
    static let eagerChunks = 2

    /// What the rows are made from.
    struct Source: Sendable {
        /// The change set's inserts.
        let inserts: [StoreChanges.Insert]
        /// The entity of each insert.
        let entities: [SQLiteStoreMapping.Entity]

        /// Encodes `rows` into one buffer, the rows one after the other.
        func encode(_ rows: Range<Int>) throws(StrataError) -> [DatabaseValue] {
            var total = 0
            for i in rows { total += entities[i].insertColumns.count }
            var cells = SQLiteSaveTransaction.nulls(total)
            var plan: SQLiteInsertPlan?
            var start = 0
            for i in rows {
                let entity = entities[i]
                let layout = inserts[i].values.layout
                if plan?.fits(entity, layout) != true { plan = SQLiteInsertPlan(entity: entity, layout: layout) }
                try plan?.encode(inserts[i].values, into: &cells, at: start)
                start += entity.insertColumns.count
            }
            return cells
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
    private var ready: [Int: Result<[DatabaseValue], StrataError>] = [:]
    private var cancelled = false

    /// A pipeline for `source`; encodes small saves at once, starts the
    /// helper thread for large ones.
    init(_ source: Source) {
        self.source = source
        rowCount = source.inserts.count
        chunkCount = (rowCount + Self.chunkRows - 1) / Self.chunkRows
        if chunkCount <= Self.eagerChunks {
            for chunk in 0..<chunkCount { ready[chunk] = Result { () throws(StrataError) in try source.encode(rows(ofChunk: chunk)) } }
            nextUnclaimed = chunkCount
        } else {
            let thread = Thread { [self] in runHelper() }
            thread.name = "strata.sqlite.encode"
            thread.start()
        }
    }

    /// The insert indices of a chunk.
    func rows(ofChunk chunk: Int) -> Range<Int> {
        (chunk * Self.chunkRows)..<min(rowCount, (chunk + 1) * Self.chunkRows)
    }

    /// The encoded rows of `chunk`, taken in order (0, 1, 2, …): waits for
    /// the helper when it is encoding that chunk, encodes it here when
    /// nobody has started it. Throws the first value that does not fit its
    /// attribute.
    func take(_ chunk: Int) throws(StrataError) -> [DatabaseValue] {
        condition.lock()
        if claimForWriter(chunk) {
            condition.unlock()
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
