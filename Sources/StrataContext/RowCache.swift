import NIOConcurrencyHelpers
import StrataModel
import StrataStore

/// The coordinator's row cache: the last snapshots read by object ID, shared
/// by every context, so fetching an object by ID (a fault, `existingObject`,
/// a server's get) need not reach the store.
///
/// Rows enter the cache when they are read by ID, as the store holds
/// them; saves do not add rows. A stream of inserts would otherwise push
/// out the rows readers use, every one of them in turn (the cache is
/// first in, first out), and cost each insert a snapshot kept and, once
/// the cache is full, an older one dropped; an inserted object is read
/// from its store once, by its first read by ID.
///
/// Coherent with saves made through the coordinator: every published
/// change set drops the updated and deleted objects before the saving
/// context returns. A read that raced with such a save does not fill the
/// cache (a generation number changes with each invalidation). Changes made
/// by other processes are not seen until they are published here.
/// Bounded: when full, the oldest entries go first.
public final class RowCache: Sendable {
    /// A cached row and what a user of the cache made from it (a server
    /// keeps the row's encoded answer): the attachment belongs to this
    /// snapshot and goes whenever the snapshot does (eviction,
    /// invalidation, a newer read, ``removeAll()``).
    ///
    /// A class, immutable: a lookup hands out one reference, where a copy
    /// of the snapshot and the attachment would retain each of their parts
    /// (a get answered from the cache does little else).
    public final class CachedRow: Sendable {
        /// The row as last read from its store.
        public let snapshot: Snapshot
        /// Bytes attached with ``attach(_:to:readAt:)``, if any.
        public let attachment: [UInt8]?

        init(snapshot: Snapshot, attachment: [UInt8]?) {
            self.snapshot = snapshot
            self.attachment = attachment
        }
    }

    private struct State {
        var entries: [ObjectID: CachedRow] = [:]
        var order: [ObjectID] = []
        var head = 0
        var generation: UInt64 = 0
        var hits: UInt64 = 0
        var misses: UInt64 = 0
    }

    /// The most snapshots kept (0 disables the cache).
    public let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// A cache of at most `capacity` snapshots.
    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Whether the cache keeps anything.
    public var isEnabled: Bool { capacity > 0 }

    /// The cached snapshots among `ids`, the IDs still to read, and the
    /// generation to hand back to ``store(_:readAt:)``.
    func lookup(_ ids: [ObjectID]) -> (found: [Snapshot], missing: [ObjectID], generation: UInt64) {
        state.withLockedValue { state in
            var found: [Snapshot] = []
            var missing: [ObjectID] = []
            for id in ids {
                if let row = state.entries[id] { found.append(row.snapshot) } else { missing.append(id) }
            }
            state.hits += UInt64(found.count)
            state.misses += UInt64(missing.count)
            return (found, missing, state.generation)
        }
    }

    /// The rows of `ids`, in their order, when every one is cached, with
    /// the generation to hand back to ``attach(_:to:readAt:)``; nil when any
    /// is not (nothing is counted then: the caller goes on to
    /// ``Coordinator/snapshots(for:in:)``, which counts). For answering on
    /// a thread that must not wait, such as an event loop.
    public func cachedRows(_ ids: [ObjectID]) -> (rows: [CachedRow], generation: UInt64)? {
        guard isEnabled else { return nil }
        return state.withLockedValue { state in
            var found: [CachedRow] = []
            found.reserveCapacity(ids.count)
            for id in ids {
                guard let row = state.entries[id] else { return nil }
                found.append(row)
            }
            state.hits += UInt64(found.count)
            return (found, state.generation)
        }
    }

    /// ``cachedRows(_:)`` for one ID, without the arrays (a get of one
    /// object is the common case).
    public func cachedRow(_ id: ObjectID) -> (row: CachedRow, generation: UInt64)? {
        guard isEnabled else { return nil }
        return state.withLockedValue { state in
            guard let row = state.entries[id] else { return nil }
            state.hits += 1
            return (row, state.generation)
        }
    }

    /// The snapshots of `ids`, in their order, when every one is cached.
    public func cachedSnapshots(_ ids: [ObjectID]) -> [Snapshot]? {
        cachedRows(ids)?.rows.map(\.snapshot)
    }

    /// Attaches `attachment` to the cached row of `snapshot`, unless the
    /// cache changed since `generation` (from ``cachedRows(_:)``): the row
    /// may have been replaced or dropped since it was read.
    public func attach(_ attachment: [UInt8], to snapshot: Snapshot, readAt generation: UInt64) {
        state.withLockedValue { state in
            guard state.generation == generation, state.entries[snapshot.objectID]?.snapshot.version == snapshot.version else { return }
            state.entries[snapshot.objectID] = CachedRow(snapshot: snapshot, attachment: attachment)
        }
    }

    /// Keeps snapshots read from a store, unless a save invalidated
    /// anything since `generation` (the read may predate it).
    func store(_ snapshots: [Snapshot], readAt generation: UInt64) {
        guard isEnabled else { return }
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            for snapshot in snapshots {
                if state.entries.updateValue(CachedRow(snapshot: snapshot, attachment: nil), forKey: snapshot.objectID) == nil {
                    Self.remember(snapshot.objectID, in: &state, capacity: capacity)
                }
            }
        }
    }

    /// Drops what a committed save changed.
    func invalidate(_ changes: ChangeSet) {
        guard isEnabled, !(changes.updated.isEmpty && changes.deleted.isEmpty) else { return }
        state.withLockedValue { state in
            state.generation &+= 1
            for id in changes.updated.keys { state.entries[id] = nil }
            for id in changes.deleted { state.entries[id] = nil }
        }
    }

    /// Drops everything (e.g. when another process changed the store).
    public func removeAll() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries.removeAll()
            state.order.removeAll()
            state.head = 0
        }
    }

    /// Lookups answered from the cache and lookups that went to a store.
    public var statistics: (hits: UInt64, misses: UInt64, count: Int) {
        state.withLockedValue { ($0.hits, $0.misses, $0.entries.count) }
    }

    /// FIFO eviction over a ring of keys.
    private static func remember(_ id: ObjectID, in state: inout State, capacity: Int) {
        if state.order.count < capacity {
            state.order.append(id)
            return
        }
        let evicted = state.order[state.head]
        state.entries[evicted] = nil
        state.order[state.head] = id
        state.head = (state.head + 1) % capacity
    }
}
