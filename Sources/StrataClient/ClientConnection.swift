import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import StrataWire
import SwiftProtobuf

/// One TCP connection to a server: writes request frames, and a reader
/// task routes every response to the request waiting for it (by request
/// id, in any order) and every notification to its subscription.
final class ClientConnection: Sendable {
    typealias Responses = AsyncThrowingStream<Strata_V1_ServerFrame, any Error>

    private struct State {
        var pending: [UInt64: Responses.Continuation] = [:]
        var routes: [UInt64: @Sendable (Strata_V1_ChangeNotification) -> Void] = [:]
        /// Set once the connection has failed or closed.
        var failure: StrataClientError?
        /// Told once when the connection fails.
        var onFailure: (@Sendable (StrataClientError) -> Void)?
    }

    private let state = NIOLockedValueBox(State())
    private let channel: any Channel
    private let outbound: NIOAsyncChannelOutboundWriter<Frame>
    private let compressRequests: Bool
    private let endpoint: String

    private init(channel: any Channel, outbound: NIOAsyncChannelOutboundWriter<Frame>, compressRequests: Bool, endpoint: String) {
        self.channel = channel
        self.outbound = outbound
        self.compressRequests = compressRequests
        self.endpoint = endpoint
    }

    /// Connects (no hello yet).
    static func connect(_ configuration: ClientConfiguration) async throws -> ClientConnection {
        let endpoint = "\(configuration.host):\(configuration.port)"
        let maxFrameBytes = configuration.maxFrameBytes
        let asyncChannel: NIOAsyncChannel<Frame, Frame>
        do {
            asyncChannel = try await ClientBootstrap(group: configuration.eventLoopGroup)
                .connectTimeout(.nanoseconds(Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000 + configuration.connectTimeout.components.attoseconds / 1_000_000_000))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maxFrameBytes: maxFrameBytes)))
                        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                        return try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw StrataClientError(.unavailable, "cannot connect to \(endpoint): \(error)")
        }
        let (writers, writerContinuation) = AsyncStream<NIOAsyncChannelOutboundWriter<Frame>>.makeStream()
        let (connections, connectionContinuation) = AsyncStream<ClientConnection>.makeStream()
        Task {
            do {
                try await asyncChannel.executeThenClose { inbound, outbound in
                    writerContinuation.yield(outbound)
                    writerContinuation.finish()
                    var iterator = connections.makeAsyncIterator()
                    guard let connection = await iterator.next() else { return }
                    do {
                        for try await frame in inbound {
                            connection.dispatch(frame)
                        }
                        connection.fail(StrataClientError(.unavailable, "connection to \(endpoint) closed by the server"))
                    } catch {
                        connection.fail(StrataClientError(.unavailable, "connection to \(endpoint) lost: \(error)"))
                    }
                }
            } catch {
                writerContinuation.finish()
            }
        }
        var writerIterator = writers.makeAsyncIterator()
        guard let outbound = await writerIterator.next() else {
            connectionContinuation.finish()
            throw StrataClientError(.unavailable, "connection to \(endpoint) closed while opening")
        }
        let connection = ClientConnection(channel: asyncChannel.channel, outbound: outbound, compressRequests: configuration.compressRequests, endpoint: endpoint)
        connectionContinuation.yield(connection)
        connectionContinuation.finish()
        return connection
    }

    /// Whether the connection is still usable.
    var isOpen: Bool { state.withLockedValue { $0.failure == nil } }

    /// Sends a request and returns the stream of its response frames; the
    /// stream ends after the final frame and throws when the status is not
    /// OK or the connection fails.
    func send(_ frame: Strata_V1_ClientFrame) async throws -> Responses {
        let (stream, continuation) = Responses.makeStream()
        let id = frame.requestID
        let failure: StrataClientError? = state.withLockedValue { state in
            if let failure = state.failure { return failure }
            state.pending[id] = continuation
            return nil
        }
        if let failure { throw failure }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLockedValue { _ = $0.pending.removeValue(forKey: id) }
        }
        do {
            let bytes: [UInt8] = try frame.serializedBytes()
            let compress = compressRequests && bytes.count >= WireProtocol.compressionThreshold
            try await outbound.write(Frame(payload: ByteBuffer(bytes: bytes), compressed: compress))
        } catch {
            let failure = StrataClientError(.unavailable, "cannot send to \(endpoint): \(error)")
            state.withLockedValue { _ = $0.pending.removeValue(forKey: id) }
            throw failure
        }
        return stream
    }

    /// Sends a single-answer request and returns its one frame.
    func call(_ frame: Strata_V1_ClientFrame) async throws -> Strata_V1_ServerFrame {
        for try await response in try await send(frame) {
            return response
        }
        throw StrataClientError(.internal, "the server ended request \(frame.requestID) without an answer")
    }

    /// Routes notifications of a server subscription id.
    func route(subscription id: UInt64, to handler: @escaping @Sendable (Strata_V1_ChangeNotification) -> Void) {
        state.withLockedValue { $0.routes[id] = handler }
    }

    /// Stops routing a subscription's notifications.
    func unroute(subscription id: UInt64) {
        state.withLockedValue { _ = $0.routes.removeValue(forKey: id) }
    }

    /// Calls `handler` once when the connection fails or closes (at once
    /// when it already has).
    func onFailure(_ handler: @escaping @Sendable (StrataClientError) -> Void) {
        let failure: StrataClientError? = state.withLockedValue { state in
            if let failure = state.failure { return failure }
            state.onFailure = handler
            return nil
        }
        if let failure { handler(failure) }
    }

    /// Closes the connection; pending requests fail.
    func close() {
        fail(StrataClientError(.unavailable, "connection to \(endpoint) closed by the client"))
        channel.close(promise: nil)
    }

    private func dispatch(_ frame: Frame) {
        let message: Strata_V1_ServerFrame
        do {
            message = try Strata_V1_ServerFrame(serializedBytes: Array(frame.payload.readableBytesView))
        } catch {
            fail(StrataClientError(.internal, "the server sent a frame that is not a ServerFrame: \(error)"))
            channel.close(promise: nil)
            return
        }
        if message.requestID == 0 {
            if case .notification(let notification)? = message.response {
                let handler = state.withLockedValue { $0.routes[notification.subscriptionID] }
                handler?(notification)
            } else if message.hasStatus {
                // A connection-level error; the server closes next.
                fail(StrataClientError(status: message.status))
            }
            return
        }
        let last = !message.moreFollows || (message.hasStatus && message.status.code != .ok)
        let continuation = state.withLockedValue { state in
            last ? state.pending.removeValue(forKey: message.requestID) : state.pending[message.requestID]
        }
        guard let continuation else { return }
        if message.hasStatus, message.status.code != .ok {
            continuation.finish(throwing: StrataClientError(status: message.status))
            return
        }
        continuation.yield(message)
        if last { continuation.finish() }
    }

    private func fail(_ error: StrataClientError) {
        let (pending, failure, handler): ([Responses.Continuation], StrataClientError, (@Sendable (StrataClientError) -> Void)?) = state.withLockedValue { state in
            var handler: (@Sendable (StrataClientError) -> Void)?
            if state.failure == nil {
                state.failure = error
                handler = state.onFailure
                state.onFailure = nil
            }
            defer { state.pending.removeAll() }
            return (Array(state.pending.values), state.failure ?? error, handler)
        }
        for continuation in pending { continuation.finish(throwing: failure) }
        handler?(failure)
    }
}
