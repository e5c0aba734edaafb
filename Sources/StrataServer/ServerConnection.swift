import Logging
import NIOCore
import NIOSSL
import StrataAuth
import StrataWire
import SwiftProtobuf

/// Serves one accepted connection: hello first, then requests run
/// concurrently (up to the in-flight limit, beyond which the connection is
/// not read), answers written as they finish, notifications pushed.
struct ServerConnection {
    let core: ServerCore
    let channel: NIOAsyncChannel<Frame, ByteBuffer>
    /// Shared with the connection's ``EventLoopRequestHandler``.
    let state: ConnectionState
    let logger: Logger

    /// Runs until the client closes, the connection breaks, idles out, or
    /// the server shuts down (input closed: running requests still finish).
    func run() async {
        do {
            try await channel.executeThenClose { inbound, outbound in
                let writer = ResponseWriter(outbound: outbound, maxFrameBytes: core.configuration.maxFrameBytes, state: state)
                let session = Session(core: core, writer: writer, logger: logger)
                let limiter = state.limiter
                // The connection's work runs in one task, cancelled when the
                // channel closes (the client went away, or shutdown's grace
                // period ended): nothing it queued is started after that, and
                // what runs stops at its next check. A half-close is not a
                // close: the requests received are still answered.
                let work = Task {
                    await withDiscardingTaskGroup { group in
                        if let timeout = core.configuration.idleTimeout {
                            group.addTask { await watchIdleness(session: session, limiter: limiter, timeout: timeout) }
                        }
                        let reason = await readRequests(inbound, session: session, writer: writer, limiter: limiter, group: &group)
                        state.stopReading(reason)
                        await limiter.waitUntilIdle()
                        await session.close()
                        group.cancelAll()
                    }
                }
                state.onCancel { work.cancel() }
                channel.channel.closeFuture.whenComplete { _ in state.channelClosed() }
                await withTaskCancellationHandler {
                    await work.value
                } onCancel: {
                    work.cancel()
                }
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        }
    }

    private func readRequests(
        _ inbound: NIOAsyncChannelInboundStream<Frame>,
        session: Session,
        writer: ResponseWriter,
        limiter: InFlightLimiter,
        group: inout DiscardingTaskGroup
    ) async -> ConnectionStateMachine.DrainReason {
        var clientName = ""
        do {
            for try await frame in inbound {
                session.activity.touch()
                let request: Strata_V1_ClientFrame
                do {
                    request = try Strata_V1_ClientFrame(serializedBytes: ProtobufBytes(frame.payload))
                } catch {
                    throw WireError(.invalidArgument, "a frame of \(frame.payload.readableBytes) bytes is not a valid ClientFrame message: \(error)")
                }
                if clientName.isEmpty {
                    // An address that failed before waits for its turn
                    // before any token of it is checked.
                    let address = Self.sourceAddress(channel.channel.remoteAddress)
                    let wait = core.authFailures.admission(for: address)
                    if wait > .zero {
                        try? await Task.sleep(for: wait)
                        // Closed while waiting: the turn stays spent.
                        if Task.isCancelled { return .inputEnded }
                    }
                    do {
                        try await session.hello(request, certificateSubject: await clientCertificateSubject())
                        clientName = await session.clientName
                        let subject = await session.identity.subject
                        logger.debug("hello", metadata: ["client": "\(clientName)", "subject": "\(subject)"])
                    } catch {
                        let status = RequestFailure.status(for: error)
                        if status.code == .unauthenticated {
                            // Seen and counted: never the token itself.
                            core.authFailures.failed(from: address)
                            logger.warning("authentication failed", metadata: [
                                "peer": "\(channel.channel.remoteAddress?.description ?? "?")",
                                "failures": "\(core.authFailures.failures(from: address))",
                            ])
                        }
                        try? await writer.send(requestID: request.requestID, status: status)
                        return .helloRefused
                    }
                    continue
                }
                await limiter.acquire()
                if Task.isCancelled {
                    // The channel closed while this request waited for a slot.
                    limiter.release()
                    return .inputEnded
                }
                let name = clientName
                group.addTask {
                    await session.handle(request, clientName: name)
                    limiter.release()
                }
            }
        } catch {
            // A frame that breaks the protocol: say why, then close. Nothing
            // read after it is answered, on the loop either.
            state.stopReading(.protocolError)
            logger.debug("protocol error", metadata: ["error": "\(error)"])
            try? await writer.send(requestID: 0, status: RequestFailure.status(for: error))
            return .protocolError
        }
        return .inputEnded
    }

    /// The subject of the client's verified TLS certificate, if the
    /// connection is TLS and the client presented one.
    private func clientCertificateSubject() async -> String? {
        guard core.configuration.tls?.requiresClientCertificates == true,
              let certificate = try? await channel.channel.nioSSL_peerCertificate().get(),
              let der = try? certificate.toDERBytes() else { return nil }
        return CertificateSubject.name(fromDER: der)
    }

    /// Where failures are counted: an IPv4 host, or an IPv6 /64 (one host
    /// commonly holds a whole /64, and could otherwise rotate through it).
    static func sourceAddress(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        if case .v6(let v6) = address {
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            // An IPv4 client of a dual-stack listener (::ffff:a.b.c.d) is one host.
            let mappedIPv4 = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            if !mappedIPv4 {
                return bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
            }
        }
        return address.ipAddress ?? "unknown"
    }

    /// Closes the connection once it has been idle for `timeout`: no frame
    /// received and no request answered, none running, no subscription.
    private func watchIdleness(session: Session, limiter: InFlightLimiter, timeout: Duration) async {
        let tick = max(timeout / 4, .milliseconds(10))
        while !Task.isCancelled {
            try? await Task.sleep(for: tick)
            if Task.isCancelled { return }
            // Running requests first: the last one to end touches the clock
            // under the limiter's lock, so its answer restarts the wait.
            guard limiter.running == 0, session.activity.idleTime >= timeout else { continue }
            if await !session.hasSubscriptions {
                logger.debug("closing idle connection")
                state.stopReading(.idle)
                try? await session.writer.send(requestID: 0, status: WireError(.unavailable, "connection idle for \(timeout): closing").status)
                channel.channel.close(promise: nil)
                return
            }
        }
    }
}
