import NIOCore
import NIOPosix
import StrataWire
import SwiftProtobuf

/// One TCP connection to a server: writes request frames straight to the
/// channel, and its ``ResponseHandler`` hands every answer, on the event
/// loop, to the request waiting for it (by request id, in any order) and
/// every notification to its subscription, through a ``ClientRouter``.
final class ClientConnection: Sendable {
    typealias Responses = ThrottledResponses

    private let router: ClientRouter
    private let channel: any Channel
    private let compressRequests: Bool
    private let endpoint: String

    private init(router: ClientRouter, channel: any Channel, compressRequests: Bool, endpoint: String) {
        self.router = router
        self.channel = channel
        self.compressRequests = compressRequests
        self.endpoint = endpoint
    }

    /// Connects (no hello yet).
    static func connect(_ configuration: ClientConfiguration) async throws -> ClientConnection {
        let endpoint = "\(configuration.host):\(configuration.port)"
        let maxFrameBytes = configuration.maxFrameBytes
        if let refusal = configuration.plaintextTokenRefusal {
            throw StrataClientError(.failedPrecondition, refusal)
        }
        let router = ClientRouter()
        let tls = try configuration.tls.map { tls throws(StrataClientError) in (tls, try tls.makeContext()) }
        let host = configuration.host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: configuration.eventLoopGroup)
                .connectTimeout(.nanoseconds(Int64(configuration.connectTimeout.components.seconds) * 1_000_000_000 + configuration.connectTimeout.components.attoseconds / 1_000_000_000))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let (settings, context) = tls {
                            try channel.pipeline.syncOperations.addHandler(settings.makeHandler(context: context, host: host))
                        }
                        try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder(maxFrameBytes: maxFrameBytes)))
                        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                        try channel.pipeline.syncOperations.addHandler(ResponseHandler(router: router, endpoint: endpoint))
                    }
                }
                .connect(host: configuration.host, port: configuration.port)
                .get()
        } catch {
            throw StrataClientError(.unavailable, "cannot connect to \(endpoint): \(error)")
        }
        router.throttle.attach { [channel] throttle in
            // The state as it is when this runs, not as it was when queued.
            channel.eventLoop.execute {
                channel.setOption(ChannelOptions.autoRead, value: throttle.isReading).whenFailure { _ in }
            }
        }
        return ClientConnection(router: router, channel: channel, compressRequests: configuration.compressRequests, endpoint: endpoint)
    }

    /// Whether the connection is still usable.
    var isOpen: Bool { router.isOpen }

    /// Sends a request and returns the stream of its response frames; the
    /// stream ends after the final frame and throws when the status is not
    /// OK or the connection fails.
    func send(_ frame: Strata_V1_ClientFrame) async throws -> Responses {
        let bytes = try serialized(frame)
        let (stream, continuation) = ClientRouter.Responses.makeStream()
        let id = frame.requestID
        if let failure = router.register(.stream(continuation), for: id) { throw failure }
        // The stream's frames stop counting when its consumer lets go of
        // it (ThrottledResponses.Lease), not when it finishes: finished, it
        // may still hold frames the consumer will take.
        continuation.onTermination = { [router] _ in _ = router.remove(id) }
        write(bytes, id: id)
        return ThrottledResponses(frames: stream, throttle: router.throttle, id: id)
    }

    /// Sends a single-answer request and returns its one frame. For a
    /// subscribe, `notifications` receives the subscription's notifications
    /// from its answer on (routed before the answer reaches the caller).
    func call(_ frame: Strata_V1_ClientFrame, notifications: (@Sendable (Strata_V1_ChangeNotification) -> Void)? = nil) async throws -> Strata_V1_ServerFrame {
        let bytes = try serialized(frame)
        let id = frame.requestID
        let router = self.router
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let waiter: ClientRouter.Waiter = notifications.map { .subscribe(continuation, $0) } ?? .single(continuation)
                if let failure = router.register(waiter, for: id) {
                    continuation.resume(throwing: failure)
                    return
                }
                if Task.isCancelled {
                    router.remove(id)?.fail(CancellationError())
                    return
                }
                write(bytes, id: id)
            }
        } onCancel: {
            router.remove(id)?.fail(CancellationError())
        }
    }

    /// Stops routing a subscription's notifications.
    func unroute(subscription id: UInt64) {
        router.unroute(subscription: id)
    }

    /// Calls `handler` once when the connection fails or closes (at once
    /// when it already has).
    func onFailure(_ handler: @escaping @Sendable (StrataClientError) -> Void) {
        router.onFailure(handler)
    }

    /// Closes the connection; pending requests fail.
    func close() {
        router.fail(StrataClientError(.unavailable, "connection to \(endpoint) closed by the client"))
        channel.close(promise: nil)
    }

    private func serialized(_ frame: Strata_V1_ClientFrame) throws -> Frame {
        let bytes: [UInt8]
        do {
            bytes = try frame.serializedBytes()
        } catch {
            throw StrataClientError(.invalidArgument, "request \(frame.requestID) cannot be encoded: \(error)")
        }
        return Frame(payload: ByteBuffer(bytes: bytes), compressed: compressRequests && bytes.count >= WireProtocol.compressionThreshold)
    }

    /// Writes and flushes a request (queued on the event loop; the caller
    /// does not wait for the socket). A write that fails fails its request.
    private func write(_ frame: Frame, id: UInt64) {
        let (router, endpoint) = (self.router, self.endpoint)
        channel.writeAndFlush(frame).whenFailure { error in
            router.remove(id)?.fail(StrataClientError(.unavailable, "cannot send to \(endpoint): \(error)"))
        }
    }
}
