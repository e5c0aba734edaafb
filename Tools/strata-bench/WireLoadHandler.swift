import Foundation
import NIOCore
import StrataWire
import SwiftProtobuf

/// One phase of load the wire driver runs (a warmup or the measured run).
struct LoadPhase: Sendable {
    let workload: Workload
    let mix: OperationMix
    /// Stop after this many requests (across every connection).
    let requestLimit: Int?
    let start: NIODeadline
    /// No request is sent at or after this instant.
    let deadline: NIODeadline?
    /// Requests per second, open loop (request k is due at start + k / rate).
    let rate: Double?
    /// The ramp and the per-request timeout.
    let shape: LoadShape
    /// Shared by every connection: the request counter and the progress line.
    let progress: LoadRunner.Progress
}

/// Starts a phase on one connection; `finished` gets its figures once
/// every request it sent was answered (or the connection closed).
struct StartPhase: Sendable {
    let phase: LoadPhase
    /// Requests this connection keeps in flight.
    let slots: Int
    /// This connection's place among the driver's (for the ramp's share).
    let index: Int
    let connections: Int
    /// Requests in flight across every connection.
    let concurrency: Int
    let seed: UInt64
    let finished: EventLoopPromise<Recorder>
}

/// Runs `strata-bench`'s load on one connection, entirely on its event
/// loop: it says hello, then keeps `slots` requests in flight, sending the
/// next one as an answer arrives, timing each from when it was due, and
/// counting answers by status. Answers are read by their top-level fields
/// (``ServerFrameHeader``); only saves' answers and refusals are decoded,
/// for the versions and conflicts the workload learns from.
final class WireLoadHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    /// Whole wire frames (the handler frames its requests itself; there
    /// is no frame encoder after it).
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        var operation: BenchOperation
        var due: NIODeadline
        var target: String?
        /// When it was written (a `--timeout` counts from here).
        var sent = NIODeadline.now()
    }

    /// A phase under way (a class: changed in place, never copied).
    private final class Run {
        let phase: LoadPhase
        let slots: Int
        let index: Int
        let connections: Int
        let concurrency: Int
        let finished: EventLoopPromise<Recorder>
        var random: SplitMix64
        /// The inserted objects' UUIDs.
        var uuids = UUIDSource()
        var recorder = Recorder()
        /// Requests waiting for their due time (open loop).
        var scheduled = 0
        /// No more requests to take (count or duration reached, or closed).
        var exhausted: Bool
        /// Checks timeouts and opens slots during the ramp.
        var ticker: Scheduled<Void>?

        init(phase: LoadPhase, slots: Int, index: Int, connections: Int, concurrency: Int, finished: EventLoopPromise<Recorder>, random: SplitMix64, exhausted: Bool) {
            self.phase = phase
            self.slots = slots
            self.index = index
            self.connections = connections
            self.concurrency = concurrency
            self.finished = finished
            self.random = random
            self.exhausted = exhausted
        }
    }

    private static let helloID: UInt64 = 1

    private let hello: Strata_V1_HelloRequest
    private let compressRequests: Bool
    private var helloPromise: EventLoopPromise<Strata_V1_HelloResponse>?
    private var run: Run?
    private var pending: [UInt64: Pending] = [:]
    private var nextID = WireLoadHandler.helloID + 1
    private var needsFlush = false
    private var isOpen = true
    /// Why the server is closing the connection, when it said so (a frame
    /// with request 0 and a status: too many connections, idle, a broken frame).
    private var closingStatus: Strata_V1_Status?

    init(hello: Strata_V1_HelloRequest, compressRequests: Bool, answered: EventLoopPromise<Strata_V1_HelloResponse>) {
        self.hello = hello
        self.compressRequests = compressRequests
        self.helloPromise = answered
    }

    func channelActive(context: ChannelHandlerContext) {
        var frame = Strata_V1_ClientFrame()
        frame.requestID = Self.helloID
        frame.request = .hello(hello)
        if let bytes = try? frame.serializedBytes() as [UInt8] {
            var buffer = context.channel.allocator.buffer(capacity: bytes.count + WireProtocol.headerSize)
            FrameEncoder.write(Frame(payload: ByteBuffer(bytes: bytes)), into: &buffer)
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        } else {
            helloPromise?.fail(BenchError.setup("cannot encode the hello request"))
            helloPromise = nil
            context.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let start = event as? StartPhase else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // One phase at a time: the driver waits for each before the next.
        assert(run == nil && pending.isEmpty, "a phase started before the last one finished")
        if let previous = run { previous.finished.succeed(previous.recorder) }
        run = Run(phase: start.phase, slots: start.slots, index: start.index, connections: start.connections, concurrency: start.concurrency,
                  finished: start.finished, random: SplitMix64(seed: start.seed), exhausted: !isOpen || start.slots == 0)
        scheduleTick(context: context)
        fill(context: context)
        flushIfNeeded(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Before any decoding: the latency is the server's and the network's.
        let now = NIODeadline.now()
        let frame = unwrapInboundIn(data)
        guard let header = ServerFrameHeader(scanning: frame.payload) else {
            fail(context: context, BenchError.setup("the server sent a frame that is not a ServerFrame"))
            return
        }
        if header.requestID == 0, header.code != .ok {
            let status = (try? Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame.payload)))?.status
            closingStatus = status ?? Strata_V1_Status.with { $0.code = header.code }
            if let promise = helloPromise {
                helloPromise = nil
                promise.fail(BenchError.setup("the server refused the connection: \(header.code.name) \(status?.message ?? "")"))
            }
            return
        }
        if header.requestID == Self.helloID, let promise = helloPromise {
            helloPromise = nil
            answerHello(frame, header: header, promise: promise, context: context)
            return
        }
        guard header.requestID != 0, let request = pending[header.requestID] else { return }
        // A fetch streams batches: its last frame (or a failure) answers it.
        if header.moreFollows, header.code == .ok { return }
        pending[header.requestID] = nil
        var failure: String?
        if header.code != .ok {
            failure = header.code.name
        }
        // An insert's answer only matters to the notification probe.
        var message: String?
        if (request.operation == .insert && run?.phase.workload.probe != nil) || request.operation == .update || header.code != .ok {
            message = learn(from: frame, request: request)
        }
        record(request, failure: failure, at: now, message: message)
        fill(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushIfNeeded(context: context)
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isOpen = false
        helloPromise?.fail(BenchError.setup("the server closed the connection before answering hello"))
        helloPromise = nil
        // Requests the server never answered count as failed, under the
        // code the server gave for closing, if it gave one.
        let lost = pending.values
        pending.removeAll()
        let code = (closingStatus?.code ?? .unavailable).name
        let now = NIODeadline.now()
        for request in lost { record(request, failure: code, at: now) }
        run?.exhausted = true
        finishIfDone()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, error)
    }

    /// Schedules the next ``tick(context:)`` while the phase has a timeout
    /// or a closed-loop ramp: often enough for a tenth of the timeout, at
    /// most every 100 ms.
    private func scheduleTick(context: ChannelHandlerContext) {
        guard let current = run else { return }
        let shape = current.phase.shape
        guard shape.timeout != nil || (shape.ramp > 0 && current.phase.rate == nil) else { return }
        let every = min(0.1, max(0.001, (shape.timeout ?? 0.1) / 10))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        current.ticker = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(every * 1e9))) {
            let (handler, context) = loopBound.value
            handler.tick(context: context)
        }
    }

    /// Fails the requests past their timeout (their answers, if they come,
    /// are ignored), and sends more as the ramp opens slots.
    private func tick(context: ChannelHandlerContext) {
        guard let current = run else { return }
        defer { if run === current { scheduleTick(context: context) } }
        if let timeout = current.phase.shape.timeout {
            let now = NIODeadline.now()
            let limit = TimeAmount.nanoseconds(Int64(timeout * 1e9))
            for (id, request) in pending where now - request.sent > limit {
                pending[id] = nil
                record(request, failure: "DEADLINE_EXCEEDED", at: now)
            }
        }
        fill(context: context)
        flushIfNeeded(context: context)
    }

    // MARK: Sending

    /// Sends requests until `slots` are in flight (fewer during a ramp) or
    /// none is left to take.
    private func fill(context: ChannelHandlerContext) {
        guard let current = run else { return }
        let phase = current.phase
        let elapsed = Double((NIODeadline.now() - phase.start).nanoseconds) / 1e9
        // During a closed-loop ramp: this connection's share of the slots
        // open so far across every connection.
        let slots = phase.rate == nil && phase.shape.ramp > 0
            ? min(current.slots, LoadShape.share(of: phase.shape.slots(current.concurrency, elapsed: elapsed), connection: current.index, of: current.connections))
            : current.slots
        // A connection still waiting for its share ends with the others.
        if phase.rate == nil, slots == 0 {
            if let deadline = phase.deadline, NIODeadline.now() >= deadline { current.exhausted = true }
            if let limit = phase.requestLimit, phase.progress.issued.load(ordering: .relaxed) >= limit { current.exhausted = true }
        }
        while !current.exhausted, pending.count + current.scheduled < slots {
            let serial = phase.progress.issued.add(1, ordering: .relaxed).oldValue
            if let limit = phase.requestLimit, serial >= limit {
                current.exhausted = true
                break
            }
            let now = NIODeadline.now()
            var due = now
            if let rate = phase.rate {
                due = phase.start + .nanoseconds(Int64(phase.shape.due(serial: serial) * 1e9))
                _ = rate
                if let deadline = phase.deadline, due >= deadline {
                    current.exhausted = true
                    break
                }
                if due > now {
                    current.scheduled += 1
                    let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                    context.eventLoop.assumeIsolated().scheduleTask(deadline: due) {
                        let (handler, context) = loopBound.value
                        handler.run?.scheduled -= 1
                        handler.send(serial: serial, due: due, context: context)
                        // A request that could not be sent left its slot free.
                        handler.fill(context: context)
                        handler.flushIfNeeded(context: context)
                    }
                    continue
                }
            } else if let deadline = phase.deadline, now >= deadline {
                current.exhausted = true
                break
            }
            send(serial: serial, due: due, context: context)
        }
        finishIfDone()
    }

    /// Sends request number `serial` (a dead connection counts it failed).
    private func send(serial: Int, due: NIODeadline, context: ChannelHandlerContext) {
        guard let current = run else { return }
        let workload = current.phase.workload
        let operation = current.phase.mix.pick(Int(current.random.next() % UInt64(current.phase.mix.total)))
        let id = nextID
        var buffer: ByteBuffer
        var target: String?
        if operation == .get, !compressRequests {
            // A prepared get: the frame is the request ID and its bytes.
            let get = workload.encodedGet(random: &current.random)
            buffer = context.channel.allocator.buffer(capacity: get.count + 24)
            Self.writeRequestFrame(requestID: id, field: Self.refreshField, encodedRequest: get, into: &buffer)
        } else if operation == .query, !compressRequests, workload.hasEncodedQueries {
            // A prepared query: the frame is the request ID and its bytes.
            let query = workload.encodedQuery(random: &current.random)
            buffer = context.channel.allocator.buffer(capacity: query.count + 24)
            Self.writeRequestFrame(requestID: id, field: Self.fetchField, encodedRequest: query, into: &buffer)
        } else if operation == .insert, !compressRequests, workload.generator == nil {
            // An insert framed by hand: the same message the workload
            // builds, without a message tree and its map per request.
            let insert = workload.insertValues(random: &current.random, uuids: &current.uuids, serial: serial)
            buffer = context.channel.allocator.buffer(capacity: 96 + insert.title.utf8.count)
            Self.writeInsertFrame(requestID: id, entity: "Book", uuid: insert.uuid, title: insert.title, pages: insert.pages, into: &buffer)
        } else {
            let (request, requestTarget) = workload.request(operation, random: &current.random, serial: serial)
            target = requestTarget
            var frame = Strata_V1_ClientFrame()
            frame.requestID = id
            frame.request = request
            let bytes: [UInt8]
            do {
                bytes = try frame.serializedBytes()
            } catch {
                record(Pending(operation: operation, due: due, target: target), failure: "CLIENT_ERROR", at: nil)
                finishIfDone()
                return
            }
            buffer = context.channel.allocator.buffer(capacity: bytes.count + WireProtocol.headerSize)
            let compressed = compressRequests && bytes.count >= WireProtocol.compressionThreshold
            FrameEncoder.write(Frame(payload: ByteBuffer(bytes: bytes), compressed: compressed), into: &buffer)
        }
        let entry = Pending(operation: operation, due: due, target: target)
        guard isOpen else {
            // Never sent: failed, with no latency to tell.
            record(entry, failure: (closingStatus?.code ?? .unavailable).name, at: nil)
            finishIfDone()
            return
        }
        pending[id] = entry
        nextID &+= 1
        if nextID <= Self.helloID { nextID = Self.helloID + 1 }
        context.write(wrapOutboundOut(buffer), promise: nil)
        needsFlush = true
    }

    /// `ClientFrame.fetch` and `.refresh` (`Protocol/strata.proto`).
    static let fetchField: UInt8 = 13, refreshField: UInt8 = 15

    /// Frames `ClientFrame{request_id, <field>: <encodedRequest>}` (field
    /// numbers from `Protocol/strata.proto`), uncompressed.
    static func writeRequestFrame(requestID: UInt64, field: UInt8, encodedRequest: [UInt8], into buffer: inout ByteBuffer) {
        let payload = 1 + ByteBuffer.protobufVarintSize(requestID) + 1 + ByteBuffer.protobufVarintSize(UInt64(encodedRequest.count)) + encodedRequest.count
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(truncatingIfNeeded: payload))
        buffer.writeInteger(UInt8(0x08))            // request_id: field 1, varint
        buffer.writeProtobufVarint(requestID)
        buffer.writeInteger(field << 3 | 2)         // the request: length-delimited
        buffer.writeProtobufVarint(UInt64(encodedRequest.count))
        buffer.writeBytes(encodedRequest)
    }

    /// Frames `ClientFrame{request_id, save: SaveRequest{inserts:
    /// [InsertedObject{temporary_id: "n", entity, values: {uuid, title,
    /// pages}}]}}` (field numbers from `Protocol/strata.proto`; the message
    /// ``Workload/request(_:random:serial:)`` builds for an insert),
    /// uncompressed.
    static func writeInsertFrame(requestID: UInt64, entity: String, uuid: UUID, title: String, pages: Int64, into buffer: inout ByteBuffer) {
        func size(_ value: Int) -> Int { ByteBuffer.protobufVarintSize(UInt64(value)) }
        func delimited(_ length: Int) -> Int { 1 + size(length) + length }
        let zigzag = UInt64(bitPattern: (pages << 1) ^ (pages >> 63))
        let titleBytes = title.utf8.count
        let entityBytes = entity.utf8.count
        // Value{uuid: 8}, Value{string: 4}, Value{integer: 1 (sint64)}.
        let uuidValue = delimited(16)
        let titleValue = delimited(titleBytes)
        let pagesValue = 1 + ByteBuffer.protobufVarintSize(zigzag)
        // Map entries {key: 1, value: 2}.
        let uuidEntry = delimited(4) + delimited(uuidValue)
        let titleEntry = delimited(5) + delimited(titleValue)
        let pagesEntry = delimited(5) + delimited(pagesValue)
        let object = delimited(1) + delimited(entityBytes) + delimited(uuidEntry) + delimited(titleEntry) + delimited(pagesEntry)
        let save = delimited(object)
        let payload = 1 + ByteBuffer.protobufVarintSize(requestID) + delimited(save)

        func tag(_ field: UInt8, _ length: Int) {
            buffer.writeInteger(field << 3 | 2)
            buffer.writeProtobufVarint(UInt64(length))
        }
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt32(truncatingIfNeeded: payload))
        buffer.writeInteger(UInt8(0x08))            // request_id: field 1, varint
        buffer.writeProtobufVarint(requestID)
        tag(14, save)                               // ClientFrame.save
        tag(1, object)                              // SaveRequest.inserts
        tag(1, 1); buffer.writeString("n")          // temporary_id
        tag(2, entityBytes); buffer.writeString(entity)
        tag(4, uuidEntry)                           // values
        tag(1, 4); buffer.writeString("uuid")
        tag(2, uuidValue)
        tag(8, 16)                                  // Value.uuid
        _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
        tag(4, titleEntry)
        tag(1, 5); buffer.writeString("title")
        tag(2, titleValue)
        tag(4, titleBytes); buffer.writeString(title)   // Value.string
        tag(4, pagesEntry)
        tag(1, 5); buffer.writeString("pages")
        tag(2, pagesValue)
        buffer.writeInteger(UInt8(0x08))            // Value.integer: field 1, varint
        buffer.writeProtobufVarint(zigzag)
    }

    private func flushIfNeeded(context: ChannelHandlerContext) {
        guard needsFlush else { return }
        needsFlush = false
        context.flush()
    }

    // MARK: Answers

    private func answerHello(_ frame: Frame, header: ServerFrameHeader, promise: EventLoopPromise<Strata_V1_HelloResponse>, context: ChannelHandlerContext) {
        do {
            let message = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame.payload))
            guard header.code == .ok, case .hello(let info)? = message.response else {
                promise.fail(BenchError.setup("the server refused hello: \(message.status.code.name) \(message.status.message)"))
                context.close(promise: nil)
                return
            }
            promise.succeed(info)
        } catch {
            promise.fail(error)
            context.close(promise: nil)
        }
    }

    /// Saves teach the workload versions; refused updates, conflicts.
    /// Returns a refusal's message.
    @discardableResult
    private func learn(from frame: Frame, request: Pending) -> String? {
        guard let workload = run?.phase.workload,
              let message = try? Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame.payload)) else { return nil }
        if message.hasStatus, message.status.code != .ok {
            workload.refused(message.status.conflicts, target: request.target)
            return message.status.message
        } else if case .save(let response)? = message.response {
            workload.saved(response, target: request.target)
        }
        return nil
    }

    /// Counts a request answered (or failed) at `time`; nil for one never sent.
    private func record(_ request: Pending, failure: String?, at time: NIODeadline?, message: String? = nil) {
        guard let phase = run?.phase else { return }
        let micros = time.map { UInt64(max(0, ($0 - request.due).nanoseconds) / 1000) }
        let second = Int(((time ?? NIODeadline.now()) - phase.start).nanoseconds / 1_000_000_000)
        run?.recorder.record(request.operation, micros: micros, error: failure, second: second, message: message)
        phase.progress.done.add(1, ordering: .relaxed)
        if failure != nil { phase.progress.failed.add(1, ordering: .relaxed) }
    }

    private func finishIfDone() {
        guard let current = run, current.exhausted, pending.isEmpty, current.scheduled == 0 else { return }
        current.ticker?.cancel()
        run = nil
        current.finished.succeed(current.recorder)
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        helloPromise?.fail(error)
        helloPromise = nil
        context.close(promise: nil)
    }
}
