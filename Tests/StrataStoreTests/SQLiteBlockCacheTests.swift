import Foundation
import GRDB
import Synchronization
import Testing
@testable import StrataSQLite

/// SQLite's allocator with a per-thread cache of small blocks
/// (`Sources/CStrataSQLite/block_cache.c`): installed in this process, a
/// freed small block is handed out again on its thread, every block holds
/// at least what was asked and keeps its bytes through a reallocation, and
/// blocks allocated on one thread and freed on another (as SQLite does
/// with statements made on one connection's thread and dropped elsewhere)
/// stay intact under load from several threads.
@Suite struct SQLiteBlockCacheTests {
    private static var optedOut: Bool { ProcessInfo.processInfo.environment["STRATA_SQLITE_SYSTEM_MALLOC"] != nil }

    @Test func itIsInstalledUnlessTheEnvironmentOrAddressSanitizerKeepsSQLitesOwn() {
        #expect(SQLiteBlockCache.isInstalled == (!Self.optedOut && !Self.underAddressSanitizer))
    }

    /// AddressSanitizer's runtime is linked in.
    private static var underAddressSanitizer: Bool {
        dlsym(dlopen(nil, RTLD_NOW), "__asan_init") != nil
    }

    @Test(.enabled(if: SQLiteBlockCache.isInstalled, "SQLite's own allocator is in use"))
    func aFreedSmallBlockIsHandedOutAgainOnItsThread() throws {
        for bytes in [1, 24, 33, 100, 424, 496, 1000, 3000, 4096] {
            let first = try #require(SQLiteBlockCache.allocate(bytes))
            #expect(SQLiteBlockCache.size(first) >= bytes)
            let kept = SQLiteBlockCache.threadCachedBlocks(ofClassFor: bytes)
            SQLiteBlockCache.free(first)
            #expect(SQLiteBlockCache.threadCachedBlocks(ofClassFor: bytes) == kept + 1)
            let second = try #require(SQLiteBlockCache.allocate(bytes))
            #expect(second == first, "a block of \(bytes) bytes freed on this thread is reused")
            #expect(SQLiteBlockCache.threadCachedBlocks(ofClassFor: bytes) == kept)
            SQLiteBlockCache.free(second)
        }
        // Past the largest class: not kept.
        let large = try #require(SQLiteBlockCache.allocate(65_544))
        #expect(SQLiteBlockCache.size(large) >= 65_544)
        let kept = SQLiteBlockCache.threadCachedBlocks
        SQLiteBlockCache.free(large)
        #expect(SQLiteBlockCache.threadCachedBlocks == kept)
    }

    @Test(.enabled(if: SQLiteBlockCache.isInstalled, "SQLite's own allocator is in use"))
    func aThreadKeepsABoundedNumberOfBlocks() throws {
        let blocks = (0..<500).compactMap { _ in SQLiteBlockCache.allocate(100) }
        #expect(blocks.count == 500)
        for block in blocks { SQLiteBlockCache.free(block) }
        // At most 64 of a class are kept; the rest went back to malloc.
        // (Counted in the class alone: the thread's total also counts
        // whatever else SQLite freed on this thread meanwhile.)
        #expect(SQLiteBlockCache.threadCachedBlocks(ofClassFor: 100) == 64)
    }

    @Test func reallocationKeepsTheBytesAcrossEveryClassAndBeyond() throws {
        var memory: UnsafeMutableRawPointer?
        var size = 0
        for next in [1, 7, 8, 31, 32, 33, 64, 65, 200, 129, 512, 513, 1024, 4095, 4096, 4097, 20_000, 70_000, 5_000, 3_000, 10, 2] {
            let grown = try #require(SQLiteBlockCache.reallocate(memory, next))
            // What was there before is still there.
            if size > 0 {
                let kept = UnsafeRawBufferPointer(start: grown, count: min(size, next))
                let changed = kept.indices.first { kept[$0] != UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                #expect(changed == nil, "byte \(changed ?? 0) changed in reallocating \(size) bytes to \(next)")
            }
            #expect(SQLiteBlockCache.size(grown) >= next)
            for offset in 0..<next { grown.storeBytes(of: UInt8(truncatingIfNeeded: offset &* 31 &+ 7), toByteOffset: offset, as: UInt8.self) }
            memory = grown
            size = next
        }
        SQLiteBlockCache.free(memory)
    }

    @Test func blocksMovedBetweenThreadsStayIntact() async throws {
        // Each task allocates blocks of random sizes, fills them with its
        // own pattern, hands half to the next task to check and free, and
        // checks and frees the rest itself, many rounds over.
        let tasks = 4
        let rounds = 200
        let handoff = Handoff(tasks: tasks)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var generator = SplitMix(seed: UInt64(task + 1))
                    var checked = 0
                    for round in 0..<rounds {
                        var mine: [(UnsafeMutableRawPointer, Int, UInt8)] = []
                        for index in 0..<32 {
                            let bytes = Int(generator.next() % 6000) + 1
                            guard let block = SQLiteBlockCache.allocate(bytes) else { throw CancellationError() }
                            let pattern = UInt8(truncatingIfNeeded: task &* 17 &+ round &+ index)
                            block.initializeMemory(as: UInt8.self, repeating: pattern, count: bytes)
                            mine.append((block, bytes, pattern))
                        }
                        handoff.give(Array(mine.prefix(16)).map { Block(address: UInt(bitPattern: $0.0), bytes: $0.1, pattern: $0.2) }, to: (task + 1) % tasks)
                        for (block, bytes, pattern) in mine.dropFirst(16) {
                            checked += Self.check(block, bytes: bytes, pattern: pattern) ? 1 : 0
                            SQLiteBlockCache.free(block)
                        }
                        for given in handoff.take(for: task) {
                            let block = UnsafeMutableRawPointer(bitPattern: given.address)
                            checked += block.map { Self.check($0, bytes: given.bytes, pattern: given.pattern) ? 1 : 0 } ?? 0
                            SQLiteBlockCache.free(block)
                        }
                        await Task.yield()
                    }
                    return checked
                }
            }
            var total = 0
            for try await checked in group { total += checked }
            // What is still waiting in a hand-off is checked and freed here.
            for task in 0..<tasks {
                for given in handoff.take(for: task) {
                    let block = UnsafeMutableRawPointer(bitPattern: given.address)
                    total += block.map { Self.check($0, bytes: given.bytes, pattern: given.pattern) ? 1 : 0 } ?? 0
                    SQLiteBlockCache.free(block)
                }
            }
            #expect(total == tasks * rounds * 32)
        }
    }

    @Test func aDatabaseWrittenAndReadThroughItHoldsWhatWasWritten() throws {
        let directory = try SQLiteTestDirectory()
        defer { directory.remove() }
        let pool = try DatabasePool(path: directory.url.appendingPathComponent("blocks.sqlite").path)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b BLOB NOT NULL)")
            try db.execute(sql: "CREATE INDEX ta ON t (a)")
        }
        var generator = SplitMix(seed: 42)
        var expected: [Int64: (String, Data)] = [:]
        for batch in 0..<20 {
            try pool.write { db in
                for row in 0..<100 {
                    let id = Int64(batch * 100 + row)
                    let text = String(repeating: "x", count: Int(generator.next() % 300)) + "\(generator.next())"
                    let blob = Data((0..<Int(generator.next() % 5000)).map { UInt8(truncatingIfNeeded: $0 &+ row) })
                    try db.execute(sql: "INSERT INTO t (id, a, b) VALUES (?, ?, ?)", arguments: [id, text, blob])
                    expected[id] = (text, blob)
                }
            }
        }
        try pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, a, b FROM t ORDER BY a")
            #expect(rows.count == expected.count)
            for row in rows {
                let id: Int64 = row["id"]
                #expect(expected[id]?.0 == row["a"])
                #expect(expected[id]?.1 == row["b"])
            }
        }
    }

    private static func check(_ block: UnsafeMutableRawPointer, bytes: Int, pattern: UInt8) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: block, count: bytes)
        return bytes.allSatisfy { $0 == pattern }
    }

    /// A block handed from one task to another (by address: pointers are not Sendable).
    private struct Block: Sendable {
        var address: UInt
        var bytes: Int
        var pattern: UInt8
    }

    /// Blocks waiting for each task.
    private final class Handoff: Sendable {
        private let waiting: Mutex<[[Block]]>

        init(tasks: Int) {
            waiting = Mutex(Array(repeating: [], count: tasks))
        }

        func give(_ blocks: [Block], to task: Int) {
            waiting.withLock { $0[task].append(contentsOf: blocks) }
        }

        func take(for task: Int) -> [Block] {
            waiting.withLock { waiting in
                defer { waiting[task] = [] }
                return waiting[task]
            }
        }
    }
}
