import NIOCore
import StrataContext
import StrataModel
import StrataQuery
import StrataStore
import StrataWire
import SwiftProtobuf

/// Answers gets on the event loop: a Refresh that needs no fetched property
/// and no relationship, for objects that are all in the coordinator's row
/// cache, is answered as the frame is read, with no task, no actor hop and
/// one flush per batch of reads. Every other frame (and a get this handler
/// cannot answer whole) goes on to the connection's async side unchanged.
///
/// The answer is the one the async side would give (``ServerCore/state(of:)``
/// of the cached snapshot; the cache is coherent with saves made through
/// the coordinator). It answers only:
/// - after the hello's answer was written (``ConnectionState/answersOnEventLoop``),
///   and not once the connection stops reading requests;
/// - while the socket is writable, so a client that does not read meets
///   the async side's backpressure instead of a growing buffer here;
/// - answers within the frame limit (else the async side refuses them);
/// - for a caller bound by access rules, only objects its `read` rule
///   admits, judged in memory on the cached values, and only when its
///   rules hide no related object (``ServerCore/mayHideReferences(_:)``);
///   a rule that follows relationships gives no verdict here. An object
///   not admitted (which the async side answers as missing) sends the
///   whole get to the async side.
final class CachedGetHandler: EventLoopAnswering, RemovableChannelHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    /// Whole wire frames, framed as they are built (no encoder copies
    /// them again).
    typealias OutboundOut = ByteBuffer

    /// The most objects one get may name to be answered here.
    static let maximumObjects = 64
    /// The largest answer built here (by the values' sizes); larger ones
    /// are built off the loop by the async side, so one get of big blobs
    /// does not stall every connection of the loop.
    static let maximumAnswerBytes = 64 * 1024
    /// The statistics name of what this handler answers.
    static let operationName = Session.operationName(.refresh(Strata_V1_RefreshRequest()))
    /// `ClientFrame.refresh`'s field number (`Protocol/strata.proto`).
    static let refreshField: UInt64 = 15

    private let core: ServerCore
    /// This handler's requests' figures.
    private let recorder: ServerStats.OperationRecorder
    let state: ConnectionState
    private let maxFrameBytes: Int
    var needsFlush = false
    /// The evaluator of each entity's `read` rule (nil when it cannot be
    /// evaluated in memory), for a caller bound by rules. Used on the
    /// handler's event loop only.
    private var ruleEvaluators: [String: RuleEvaluator] = [:]

    /// A `read` rule's evaluator, and what it was made for: one policy
    /// (held, so that no other policy can take its place at its address)
    /// and one generation of the rules. Either changed, the rule is
    /// resolved and compiled again, so rules replaced are picked up.
    private struct RuleEvaluator {
        let policy: AccessPolicy
        let generation: UInt64
        let evaluator: PredicateEvaluator<InsertValuesAccessor>?
    }

    init(core: ServerCore, state: ConnectionState, maxFrameBytes: Int) {
        self.core = core
        recorder = core.stats.recorder(for: Self.operationName)
        self.state = state
        self.maxFrameBytes = maxFrameBytes
    }

    /// The answer to `frame` when it is a get this handler can answer whole.
    func answer(_ frame: Frame, allocator: ByteBufferAllocator) -> ByteBuffer? {
        var spare: ByteBuffer?
        return answer(frame, allocator: allocator, reusing: &spare)
    }

    /// ``answer(_:allocator:)`` written into `spare` when there is one
    /// (taken when used; see ``RowEncoding/refreshAnswerFrame(requestID:states:allocator:reusing:)``).
    func answer(_ frame: Frame, allocator: ByteBufferAllocator, reusing spare: inout ByteBuffer?) -> ByteBuffer? {
        // A caller bound by access rules whose rules may hide references
        // is answered by the async side, which rewrites them.
        let policy = state.policy
        if let policy, (try? core.mayHideReferences(policy)) != false { return nil }
        let cache = core.coordinator.rowCache
        // The common get, one permanent ID of a store of ours: read by its
        // fields, the ID from its bytes with no string made. A get's time
        // is counted from when its frame is known to be one: every other
        // frame passes here first, and does not read the clock for it.
        if let (refresh, id) = RefreshFrameScan.scanningSoleID(frame.payload, { core.permanentIDs.permanentID($0) }) {
            guard refresh.requestID != 0, !refresh.namesRelationships, !refresh.namesFetched,
                  admissible(id, skipFetched: refresh.skipFetched) else { return nil }
            let started = ContinuousClock.now
            return answer(requestID: refresh.requestID, id: id, cache: cache, policy: policy, allocator: allocator, spare: &spare, started: started)
        }
        // Other gets by their fields too; anything else is decoded in full,
        // which also finds frames that are not protobuf.
        let refresh: RefreshFrameScan
        if let scan = RefreshFrameScan(scanning: frame.payload) {
            refresh = scan
        } else {
            // A refresh, or bytes that are not a message (decoded in full
            // for the protocol error).
            guard Self.topLevel(frame.payload, has: Self.refreshField) != false else { return nil }
            guard let request = try? Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(frame.payload)) else {
                // The async side answers this frame with a protocol error and
                // closes: nothing read after it is answered here either.
                state.stopReading(.protocolError)
                return nil
            }
            guard case .refresh(let decoded)? = request.request else { return nil }
            refresh = RefreshFrameScan(requestID: request.requestID, ids: decoded.ids, namesFetched: !decoded.includeFetched.isEmpty,
                                       namesRelationships: !decoded.includeRelationships.isEmpty, skipFetched: decoded.skipFetched)
        }
        let started = ContinuousClock.now
        // Fetched properties named (even unknown ones, which the async side
        // refuses) and relationships need the async side's checks.
        guard refresh.requestID != 0, !refresh.namesRelationships, !refresh.namesFetched,
              !refresh.ids.isEmpty, refresh.ids.count <= Self.maximumObjects else { return nil }
        if refresh.ids.count == 1 {
            // One object: no arrays on the way.
            guard let id = admissibleID(refresh.ids[0], skipFetched: refresh.skipFetched) else { return nil }
            return answer(requestID: refresh.requestID, id: id, cache: cache, policy: policy, allocator: allocator, spare: &spare, started: started)
        }
        var ids: [ObjectID] = []
        ids.reserveCapacity(refresh.ids.count)
        for text in refresh.ids {
            guard let id = admissibleID(text, skipFetched: refresh.skipFetched) else { return nil }
            ids.append(id)
        }
        guard let (rows, generation) = cache.cachedRows(ids),
              policy.map({ policy in rows.allSatisfy { admits($0.snapshot, policy) } }) ?? true,
              rows.reduce(0, { $0 + ($1.attachment?.count ?? Self.approximateBytes(of: $1.snapshot)) }) <= Self.maximumAnswerBytes else { return nil }
        let answer = RowEncoding.refreshAnswerFrame(requestID: refresh.requestID, states: rows.map { encoded($0, readAt: generation) }, allocator: allocator, reusing: &spare)
        return finished(answer, allocator: allocator, started: started)
    }

    /// The answer to a get of the one object `id` (admissible), when its
    /// row is cached and may be answered here.
    private func answer(requestID: UInt64, id: ObjectID, cache: RowCache, policy: AccessPolicy?, allocator: ByteBufferAllocator, spare: inout ByteBuffer?,
                        started: ContinuousClock.Instant) -> ByteBuffer? {
        guard let (row, generation) = cache.cachedRow(id),
              policy.map({ admits(row.snapshot, $0) }) ?? true,
              (row.attachment?.count ?? Self.approximateBytes(of: row.snapshot)) <= Self.maximumAnswerBytes else { return nil }
        let answer = RowEncoding.refreshAnswerFrame(requestID: requestID, states: CollectionOfOne(encoded(row, readAt: generation)), allocator: allocator, reusing: &spare)
        return finished(answer, allocator: allocator, started: started)
    }

    /// `answer` within the frame limit (nil past it), compressed when the
    /// connection compresses and it is large; counted.
    private func finished(_ answer: ByteBuffer, allocator: ByteBufferAllocator, started: ContinuousClock.Instant) -> ByteBuffer? {
        var answer = answer
        let payloadBytes = answer.readableBytes - WireProtocol.headerSize
        guard payloadBytes <= maxFrameBytes else { return nil }
        if state.compresses, payloadBytes >= WireProtocol.compressionThreshold {
            answer.moveReaderIndex(forwardBy: WireProtocol.headerSize)
            var compressed = allocator.buffer(capacity: payloadBytes / 2 + WireProtocol.headerSize)
            FrameEncoder.write(Frame(payload: answer, compressed: true), into: &compressed)
            answer = compressed
        }
        recorder.record(duration: .now - started, failed: false)
        return answer
    }

    /// Whether `policy`'s `read` rule admits `snapshot`, judged on its
    /// values; false when the rule cannot be judged in memory (it follows
    /// relationships) or fails.
    private func admits(_ snapshot: Snapshot, _ policy: AccessPolicy) -> Bool {
        let entity = snapshot.objectID.entityName
        guard let (rule, generation) = try? policy.resolved(.read, for: entity) else { return false }
        if case .constant(let admitted) = rule { return admitted }
        let evaluator: PredicateEvaluator<InsertValuesAccessor>?
        if let known = ruleEvaluators[entity], known.generation == generation, known.policy === policy {
            evaluator = known.evaluator
        } else {
            evaluator = try? PredicateEvaluator(rule, entity: entity, model: core.model, accessor: InsertValuesAccessor())
            ruleEvaluators[entity] = RuleEvaluator(policy: policy, generation: generation, evaluator: evaluator)
        }
        guard let evaluator else { return false }
        return (try? evaluator.evaluate(InsertValuesAccessor.Row(id: snapshot.objectID, values: snapshot.values))) ?? false
    }

    /// The ID `text` names when this handler may answer for it: permanent,
    /// of a store this server has, and ``admissible(_:skipFetched:)``.
    private func admissibleID(_ text: String, skipFetched: Bool) -> ObjectID? {
        let id: ObjectID
        if let known = core.permanentIDs.permanentID(text) {
            id = known
        } else {
            guard let parsed = try? PropertyValue.parseObjectID(text), !parsed.isTemporary,
                  core.coordinator.store(identifier: parsed.storeIdentifier) != nil else { return nil }
            id = parsed
        }
        return admissible(id, skipFetched: skipFetched) ? id : nil
    }

    /// Whether this handler may answer for `id` (permanent, of a store this
    /// server has): of an entity this server has, and (unless fetched
    /// properties are skipped) one without fetched properties.
    private func admissible(_ id: ObjectID, skipFetched: Bool) -> Bool {
        guard let hasFetchedProperties = core.entityHasFetchedProperties[id.entityName] else { return false }
        return skipFetched || !hasFetchedProperties
    }

    /// A cached row's `ObjectState` bytes: its attachment, or its encoding,
    /// attached for next time when small enough.
    private func encoded(_ row: RowCache.CachedRow, readAt generation: UInt64) -> [UInt8] {
        if let encoded = row.attachment { return encoded }
        let encoded = RowEncoding.encodedState(of: row.snapshot)
        if encoded.count <= RowEncoding.maximumAttachedBytes {
            core.coordinator.rowCache.attach(encoded, to: row.snapshot, readAt: generation)
        }
        return encoded
    }

    /// Roughly how many bytes a snapshot's values take on the wire (for a
    /// row not encoded yet).
    static func approximateBytes(of snapshot: Snapshot) -> Int {
        var total = 64
        for (key, value) in snapshot.values {
            total += key.utf8.count + 8
            switch value {
            case .string(let text), .uri(let text): total += text.utf8.count
            case .binary(let data): total += data.count
            case .objects(let ids): total += ids.count * 64
            default: total += 24
            }
        }
        return total
    }

    /// Whether the top level of a protobuf message has a field numbered
    /// `field`, read without decoding (and without allocating: this runs
    /// for every frame); nil when the bytes are not a well-formed message.
    static func topLevel(_ payload: ByteBuffer, has field: UInt64) -> Bool? {
        // Over the raw bytes: slicing a ByteBuffer per field would retain
        // and release its storage for each one.
        payload.withUnsafeReadableBytes { bytes -> Bool? in
            var offset = 0
            var found = false
            while offset < bytes.count {
                guard let key = readVarint(bytes, &offset) else { return nil }
                if key >> 3 == field { found = true }
                let skip: UInt64
                switch key & 7 {
                case 0:
                    guard readVarint(bytes, &offset) != nil else { return nil }
                    continue
                case 1: skip = 8
                case 2:
                    guard let length = readVarint(bytes, &offset) else { return nil }
                    skip = length
                case 5: skip = 4
                default:
                    return nil
                }
                guard skip <= UInt64(bytes.count - offset) else { return nil }
                offset += Int(skip)
            }
            return found
        }
    }

    /// A base-128 varint of at most ten bytes at `offset`, which it moves
    /// past it; nil when the bytes end first or it runs longer.
    private static func readVarint(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }
}
