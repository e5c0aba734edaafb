import NIOCore
import StrataModel
import StrataQuery
import StrataStore
import StrataSQLite
import StrataWire
import SwiftProtobuf
import Tracing

/// Answers small fetches on the event loop as their frames are read (the
/// common fetch by its fields, ``FetchFrameScan``), as
/// ``CachedGetHandler`` answers gets: the statement kept for the request's
/// text (``FetchPlanCache``, its variables bound as parameters), read at
/// once on a SQLite store's own read-only connection with its rows written
/// into the answer as they are stepped through
/// (``SQLiteStore/visitRowsNow(_:of:budget:visitor:)``), with no task, no
/// request loop and no writer in between.
///
/// It answers what the async side answers for the same frame, byte for
/// byte the same message, for a fetch that:
/// - comes after the hello's answer (``ConnectionState/answersOnEventLoop``),
///   while the socket is writable, from a caller no access rule binds or
///   one whose rules let it read the entity and hide no reference
///   (``ServerCore/mayHideReferences(_:)``): its `read` rules are AND-ed
///   into the statement as the async side does (kept per identity and
///   rules generation);
/// - is a fetch of objects with a limit that fits one batch, or a count,
///   of entities held by one SQLite store (no store ID, no fetched
///   property or relationship named);
/// - parses, resolves and compiles, and reads within ``budget`` on a free
///   connection, without a lock met.
/// Anything else, and any failure on the way, goes on to the async side
/// unchanged, which then does all of it again and answers (errors
/// included): this handler never answers an error. A frame that names a
/// fetch but does not decode is a protocol error: the async side answers
/// it and closes, so nothing read after it is answered here.
///
/// How long the event loop is held: a read gives up once it has used
/// ``budget`` on the CPU, or four budgets of wall time have passed
/// (SQLite's progress handler; ``SQLiteInlineReaders``), values longer than the
/// inline readers' length limit and regular expressions (``SQLiteStore/snapshotsNow(_:of:budget:)``)
/// are left to the async side, an answer past ``maximumAnswerBytes`` is
/// not encoded further, and once the answers of one read burst have taken
/// ``burstBudget`` the rest of the burst goes to the async side.
final class FetchHandler: EventLoopAnswering, RemovableChannelHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    /// Whole wire frames.
    typealias OutboundOut = ByteBuffer

    /// `ClientFrame.fetch`'s field number (`Protocol/strata.proto`).
    static let fetchField: UInt64 = 13
    /// The largest frame decoded on the loop.
    static let maximumFrameBytes = 64 * 1024
    /// The most rows a fetch answered here may ask for.
    static let maximumRows = 1024
    /// How long a read may hold the event loop before it is left to the
    /// async side.
    static let budget = Duration.microseconds(500)
    /// How long the answers of one read burst may hold the event loop.
    static let burstBudget = Duration.milliseconds(1)
    /// The largest answer written here.
    static let maximumAnswerBytes = 256 * 1024
    static let operationName = Session.operationName(.fetch(Strata_V1_FetchRequest()))

    private let core: ServerCore
    /// The kept statements of this handler's event loop.
    private let plans: FetchPlanCache
    /// This handler's requests' figures.
    private let recorder: ServerStats.OperationRecorder
    let state: ConnectionState
    private let maxFrameBytes: Int
    /// ``budget`` unless a test gives another.
    private let readBudget: Duration
    /// ``burstBudget`` unless a test gives another.
    private let burstLimit: Duration
    var needsFlush = false
    /// The time answers of the current read burst have taken.
    private var spentInBurst = Duration.zero

    /// A handler answering with `core` on `state`'s connection, with the
    /// statements kept in `plans` (its event loop's); a read holds the
    /// loop for `readBudget` at most, a read burst's answers for
    /// `burstBudget`.
    init(core: ServerCore, state: ConnectionState, plans: FetchPlanCache, maxFrameBytes: Int, readBudget: Duration = FetchHandler.budget, burstBudget: Duration = FetchHandler.burstBudget) {
        self.core = core
        self.plans = plans
        recorder = core.stats.recorder(for: Self.operationName)
        self.state = state
        self.maxFrameBytes = maxFrameBytes
        self.readBudget = readBudget
        self.burstLimit = burstBudget
    }

    /// The whole answer frame, or nil to leave the frame to the async side.
    func answer(_ frame: Frame, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard !frame.compressed, frame.payload.readableBytes <= Self.maximumFrameBytes,
              CachedGetHandler.topLevel(frame.payload, has: Self.fetchField) == true else { return nil }
        guard spentInBurst < burstLimit else { return nil }
        let started = ContinuousClock.now
        let startedForSpan = DefaultTracerClock.now
        defer { spentInBurst += .now - started }
        // The common fetch is read by its fields; anything else is decoded
        // in full, which also finds frames that are not protobuf.
        let requestID: UInt64
        var fetch = Strata_V1_FetchRequest()
        if let scannedID = FetchFrameScan.scan(frame.payload, into: &fetch) {
            requestID = scannedID
        } else {
            guard let request = try? Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(frame.payload)) else {
                // The async side answers it with a protocol error and closes.
                state.stopReading(.protocolError)
                return nil
            }
            guard case .fetch(let decoded)? = request.request else { return nil }
            (requestID, fetch) = (request.requestID, decoded)
        }
        guard requestID != 0, fetch.storeID.isEmpty, fetch.includeFetched.isEmpty, fetch.includeRelationships.isEmpty,
              fetch.unknownFields.data.isEmpty else { return nil }
        let batchSize = fetch.batchSize == 0 ? WireProtocol.defaultFetchBatchSize : Int(fetch.batchSize)
        let counts: Bool
        switch fetch.resultType {
        case .count: counts = true
        case .objects: counts = false
        case .objectIds, .UNRECOGNIZED: return nil
        }
        // A caller bound by rules: a read they refuse, or rows whose
        // references they may hide, are the async side's to answer.
        let policy = state.policy
        var access: FetchPlanCache.Access?
        if let policy {
            guard (try? policy.requireReadable(fetch.entity)) != nil, (try? core.mayHideReferences(policy)) == false else { return nil }
            access = FetchPlanCache.Access(identity: policy.identity, rulesGeneration: policy.control.generation)
        }
        guard let variables = try? ServerCore.variables(fetch.variables),
              let plan = plans.plan(for: fetch, variables: variables, access: access, make: {
                  try makePlan(fetch, variables: variables, counts: counts, policy: policy)
              }) else { return nil }
        // The batch is written after room for the frame's header and the
        // payload's first fields, which are set in front of it at the end:
        // the answer is made in this one buffer.
        let headroom = ResponseWriter.fetchBatchHeadroom
        var batch: ByteBuffer
        if counts {
            guard let count = plan.store.countNow(plan.query, budget: readBudget) else { return nil }
            batch = Self.buffer(capacity: 16, headroom: headroom, allocator: allocator)
            ObjectStateEncoding.writeCount(UInt64(count), into: &batch)
        } else {
            // One batch: the limit fits it (the last frame carries the total).
            guard let limit = plan.limit, limit <= min(batchSize, Self.maximumRows) else { return nil }
            let bytes = min(maxFrameBytes, Self.maximumAnswerBytes)
            let capacity = min(512 * limit + 16, bytes, 16 * 1024)
            // Larger answers (past the frame limit: refusals) are the async side's.
            let count: Int
            if plan.store.visitsRowsNow(of: plan.entity) {
                // Rows written as they are read, with no snapshots.
                guard let (rows, visited) = Self.visitRows(plan, budget: readBudget, into: Self.buffer(capacity: capacity, headroom: headroom, allocator: allocator), limit: bytes) else { return nil }
                // Moved, not copied: the batch stays uniquely referenced,
                // so that writing to it never copies it.
                batch = consume visited
                count = rows
            } else {
                batch = Self.buffer(capacity: capacity, headroom: headroom, allocator: allocator)
                guard let rows = plan.store.snapshotsNow(plan.query, of: plan.entity, budget: readBudget),
                      (try? ObjectStateEncoding.writeStates(of: rows, into: &batch, limit: bytes)) != nil else { return nil }
                count = rows.count
            }
            ObjectStateEncoding.writeCount(UInt64(count), into: &batch)
        }
        let answer: ByteBuffer
        if state.compresses {
            // Compressed or not by the payload's size, as the async side decides.
            guard let payload = try? ResponseWriter.fetchBatchPayload(requestID: requestID, more: false, batch: batch, maxFrameBytes: maxFrameBytes) else { return nil }
            var frame = allocator.buffer(capacity: payload.readableBytes + WireProtocol.headerSize)
            FrameEncoder.write(Frame(payload: payload, compressed: payload.readableBytes >= WireProtocol.compressionThreshold), into: &frame)
            answer = frame
        } else {
            guard (try? ResponseWriter.frameFetchBatch(requestID: requestID, batch: &batch, maxFrameBytes: maxFrameBytes)) != nil else { return nil }
            answer = batch
        }
        recorder.record(duration: .now - started, failed: false)
        // A span for the fetches answered here (those passed on get the async side's).
        // The entity, not the request: wrapping the fetch in a request copies it.
        Session.startSpan(core.tracer, operation: Self.operationName, requestID: requestID, entity: fetch.entity, at: startedForSpan).end()
        return answer
    }

    /// The rows `plan` reads, written into `batch` (which this call holds
    /// the only reference to, so that writing never copies it), and how
    /// many there were; nil when they are not read here.
    private static func visitRows(_ plan: FetchPlanCache.Plan, budget: Duration, into batch: consuming ByteBuffer, limit: Int) -> (Int, ByteBuffer)? {
        var writer = ObjectStateRowWriter(batch: consume batch, limit: limit)
        guard let rows = plan.store.visitRowsNow(plan.query, of: plan.entity, budget: budget, visitor: &writer) else { return nil }
        return (rows, writer.takeBatch())
    }

    /// An empty buffer of `capacity` bytes after `headroom` bytes kept
    /// free before its reader index.
    private static func buffer(capacity: Int, headroom: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: headroom + capacity)
        buffer.moveWriterIndex(forwardBy: headroom)
        buffer.moveReaderIndex(forwardBy: headroom)
        return buffer
    }

    /// How to read `fetch`: parsed, resolved and compiled for the one
    /// SQLite store holding what it fetches; nil when no one SQLite store
    /// does.
    private func makePlan(_ fetch: Strata_V1_FetchRequest, variables: [String: VariableValue], counts: Bool, policy: AccessPolicy?) throws -> (plan: FetchPlanCache.Plan, predicate: Predicate?)? {
        let request = try core.makeFetchRequest(fetch)
        guard let store = core.soleStore(of: request) as? SQLiteStore else { return nil }
        let resolved = try core.restricted(core.coordinator.resolver.resolve(request, variables: variables), by: policy)
        let query = counts ? try store.countQuery(resolved) : try store.rowQuery(resolved)
        return (FetchPlanCache.Plan(store: store, entity: resolved.entityName, query: query, limit: resolved.limit), request.predicate)
    }

    func readBurstEnded() {
        spentInBurst = .zero
    }
}
