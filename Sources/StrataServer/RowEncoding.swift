import NIOConcurrencyHelpers
import StrataModel
import StrataStore
import StrataWire
import SwiftProtobuf

/// The protobuf encoding of recently answered rows (`ObjectState` bytes),
/// by object ID and version, so that a get of a cached row splices bytes
/// into its answer instead of building and encoding the row's value map
/// again (the largest user-space cost of a get).
///
/// Keyed by version: a row's values at a given version never change
/// (every save that changes a row gives it a new version, and primary keys
/// are never reused), so an entry is never stale for its version; a newer
/// snapshot simply misses and replaces it. Bounded: when full, the oldest
/// entries go first.
final class EncodedStateCache: Sendable {
    private struct Entry {
        var version: Int64
        var bytes: [UInt8]
    }

    private struct State {
        var entries: [ObjectID: Entry] = [:]
        var order: [ObjectID] = []
        var head = 0
        /// The row cache's reset count the entries were made under.
        var epoch: UInt64 = 0
    }

    /// Rows whose encoding is larger are encoded each time, not kept (the
    /// cache is bounded by count; this bounds it by bytes too).
    static let maximumEntryBytes = 4096

    /// The most rows kept (0 keeps none).
    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The encoding of `snapshot`'s row as an `ObjectState`, from the cache
    /// when it holds this version, else encoded and kept. `epoch` is the row
    /// cache's ``RowCache/resets`` now: when it moved, every entry goes
    /// (keys and versions may have been reused by a replaced file).
    func encodedState(of snapshot: Snapshot, epoch: UInt64 = 0) throws -> [UInt8] {
        let id = snapshot.objectID
        if capacity > 0, let entry = state.withLockedValue({ state -> Entry? in
            if state.epoch != epoch {
                state.entries.removeAll()
                state.order.removeAll()
                state.head = 0
                state.epoch = epoch
                return nil
            }
            return state.entries[id]
        }), entry.version == snapshot.version {
            return entry.bytes
        }
        let bytes: [UInt8] = try ServerCore.state(of: snapshot).serializedBytes()
        guard capacity > 0, bytes.count <= Self.maximumEntryBytes else { return bytes }
        state.withLockedValue { state in
            guard state.epoch == epoch else { return }
            if state.entries.updateValue(Entry(version: snapshot.version, bytes: bytes), forKey: id) == nil {
                Self.remember(id, in: &state, capacity: capacity)
            }
        }
        return bytes
    }

    /// A `ServerFrame` answering request `requestID` with a `RefreshResponse`
    /// whose `objects` are the given encoded `ObjectState`s, in order
    /// (field numbers from `Protocol/strata.proto`: `ServerFrame.request_id`
    /// 1, `ServerFrame.refresh` 15, `RefreshResponse.objects` 1).
    static func refreshAnswer(requestID: UInt64, states: [[UInt8]]) -> [UInt8] {
        var response: [UInt8] = []
        response.reserveCapacity(states.reduce(0) { $0 + $1.count + 6 })
        for state in states {
            response.append(0x0A)   // field 1, length-delimited
            appendVarint(UInt64(state.count), to: &response)
            response.append(contentsOf: state)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(response.count + 16)
        if requestID != 0 {
            frame.append(0x08)  // field 1, varint
            appendVarint(requestID, to: &frame)
        }
        frame.append(0x7A)      // field 15, length-delimited
        appendVarint(UInt64(response.count), to: &frame)
        frame.append(contentsOf: response)
        return frame
    }

    private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
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
