import NIOCore
import StrataWire
import SwiftProtobuf
import Synchronization

/// Writes one connection's server frames. Many request tasks write through
/// it at once. Frames that queue up while a write is in progress go out
/// together in the next write (one flush, one trip to the event loop), and
/// every sender returns only once its frame is written: NIO's async writer
/// suspends while the socket is not writable, which is the server's
/// backpressure on clients that do not read.
final class ResponseWriter: Sendable {
    private let outbound: NIOAsyncChannelOutboundWriter<Frame>
    private let compresses = Atomic<Bool>(false)
    private let queue = Mutex(Queue())

    /// What a waiting sender is told.
    private enum Turn: Sendable {
        /// Its frame was written.
        case written
        /// It becomes the writer (its frame is still queued).
        case write
    }

    /// A queued frame and the sender waiting for it (nil: the writer's own).
    private struct Entry {
        var frame: Frame
        var waiter: CheckedContinuation<Turn, any Error>?
    }

    private struct Queue {
        var entries: [Entry] = []
        var writing = false
        var failure: (any Error)?
    }

    /// Batches one writer sends before handing the job to a waiting sender,
    /// so no request task stays the writer for long.
    private static let batchesPerWriter = 4

    private let maxFrameBytes: Int

    init(outbound: NIOAsyncChannelOutboundWriter<Frame>, maxFrameBytes: Int) {
        self.outbound = outbound
        self.maxFrameBytes = maxFrameBytes
    }

    /// Compress large frames from now on (the client accepted it in hello).
    func enableCompression() {
        compresses.store(true, ordering: .relaxed)
    }

    /// Sends one frame.
    func send(_ frame: Strata_V1_ServerFrame) async throws {
        let bytes: [UInt8] = try frame.serializedBytes()
        guard bytes.count <= maxFrameBytes else {
            throw WireError(.resourceExhausted, "the answer is \(bytes.count) bytes, more than the frame limit of \(maxFrameBytes) bytes (for a fetch: ask for fewer objects per batch with batch_size, or fewer fetched properties and relationships)")
        }
        let compress = compresses.load(ordering: .relaxed) && bytes.count >= WireProtocol.compressionThreshold
        try await enqueue(Frame(payload: ByteBuffer(bytes: bytes), compressed: compress))
    }

    /// Queues a frame. The first sender to find no write in progress
    /// becomes the writer; the others wait until theirs is written (or
    /// until they are handed the writer's job).
    private func enqueue(_ frame: Frame) async throws {
        let isWriter: Bool = try queue.withLock { queue in
            if let failure = queue.failure { throw failure }
            guard !queue.writing else { return false }
            queue.writing = true
            queue.entries.append(Entry(frame: frame, waiter: nil))
            return true
        }
        if !isWriter {
            let turn: Turn = try await withCheckedThrowingContinuation { continuation in
                enum Outcome { case queued, failed(any Error), writer }
                let outcome: Outcome = queue.withLock { queue in
                    if let failure = queue.failure { return .failed(failure) }
                    if queue.writing {
                        queue.entries.append(Entry(frame: frame, waiter: continuation))
                        return .queued
                    }
                    // The writer stopped in between: this sender writes.
                    queue.writing = true
                    queue.entries.append(Entry(frame: frame, waiter: nil))
                    return .writer
                }
                switch outcome {
                case .queued: break
                case .failed(let error): continuation.resume(throwing: error)
                case .writer: continuation.resume(returning: .write)
                }
            }
            guard case .write = turn else { return }
        }
        try await writeQueued()
    }

    /// Writes the queue in batches (one write and one flush each), then
    /// stops when it is empty or hands the job to the oldest waiting sender.
    private func writeQueued() async throws {
        var batches = 0
        while true {
            let batch: [Entry] = queue.withLock { queue in
                let taken = queue.entries
                queue.entries.removeAll(keepingCapacity: true)
                if taken.isEmpty { queue.writing = false }
                return taken
            }
            if batch.isEmpty { return }
            do {
                try await outbound.write(contentsOf: batch.map(\.frame))
            } catch {
                let rest: [Entry] = queue.withLock { queue in
                    queue.failure = error
                    queue.writing = false
                    defer { queue.entries.removeAll() }
                    return queue.entries
                }
                for entry in batch + rest { entry.waiter?.resume(throwing: error) }
                throw error
            }
            for entry in batch { entry.waiter?.resume(returning: .written) }
            batches += 1
            guard batches >= Self.batchesPerWriter else { continue }
            let next: CheckedContinuation<Turn, any Error>?? = queue.withLock { queue in
                if queue.entries.isEmpty {
                    queue.writing = false
                    return .some(nil)
                }
                guard let index = queue.entries.firstIndex(where: { $0.waiter != nil }) else { return nil }
                let waiter = queue.entries[index].waiter
                queue.entries[index].waiter = nil
                return .some(waiter)
            }
            switch next {
            case .some(.some(let waiter)):
                waiter.resume(returning: .write)
                return
            case .some(.none):
                return
            case .none:
                batches = 0 // only frames without a waiter left: keep writing
            }
        }
    }

    /// Sends a response body.
    func send(requestID: UInt64, more: Bool = false, _ body: Strata_V1_ServerFrame.OneOf_Response) async throws {
        var frame = Strata_V1_ServerFrame()
        frame.requestID = requestID
        frame.moreFollows = more
        frame.response = body
        try await send(frame)
    }

    /// Sends a failure: the last frame of its request.
    func send(requestID: UInt64, status: Strata_V1_Status) async throws {
        var frame = Strata_V1_ServerFrame()
        frame.requestID = requestID
        frame.status = status
        try await send(frame)
    }
}
