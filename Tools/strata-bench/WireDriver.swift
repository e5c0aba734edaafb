import NIOCore
import NIOPosix
import StrataClient
import StrataWire

/// Drives the load over its own connections, from their event loops
/// (``WireLoadHandler``): no task, continuation or thread hop per request,
/// the way wrk and redis-benchmark drive theirs, so that on a machine the
/// server shares, the load tester's own cost stays small beside the
/// server's. `--driver client` measures through the Swift client library
/// instead.
struct WireDriver: Sendable {
    private let channels: [any Channel]
    private let group: MultiThreadedEventLoopGroup

    /// Opens `count` connections on `threads` event loops and says hello on each.
    static func connect(host: String, port: Int, count: Int, threads: Int, clientName: String, authToken: String?, compression: Bool, tls: ClientTLS? = nil, connectTimeout: Duration = .seconds(10), maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes) async throws -> WireDriver {
        let tlsContext = try tls.map { tls throws(StrataClientError) in (tls, try tls.makeContext()) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        var channels: [any Channel] = []
        do {
            for index in 0..<count {
                let hello = Strata_V1_HelloRequest.with {
                    $0.version = WireProtocol.version
                    $0.clientName = "\(clientName)-\(index)"
                    $0.authToken = authToken ?? ""
                    $0.acceptCompression = compression
                }
                let answered = group.any().makePromise(of: Strata_V1_HelloResponse.self)
                let channel: any Channel
                do {
                    channel = try await ClientBootstrap(group: group)
                        .connectTimeout(.nanoseconds(Int64(connectTimeout.components.seconds) * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000))
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                if let (settings, context) = tlsContext {
                                    try channel.pipeline.syncOperations.addHandler(settings.makeHandler(context: context, host: host))
                                }
                                try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder(maxFrameBytes: maxFrameBytes)))
                                try channel.pipeline.syncOperations.addHandler(WireLoadHandler(hello: hello, compressRequests: compression, answered: answered))
                            }
                        }
                        .connect(host: host, port: port)
                        .get()
                } catch {
                    answered.fail(error)
                    throw error
                }
                channels.append(channel)
                _ = try await answered.futureResult.get()
            }
        } catch {
            for channel in channels { try? await channel.close() }
            try? await group.shutdownGracefully()
            throw error
        }
        return WireDriver(channels: channels, group: group)
    }

    /// Runs one phase: `concurrency` requests in flight, spread over the
    /// connections; returns every connection's figures merged and the
    /// phase's wall time.
    func run(workload: Workload, mix: OperationMix, concurrency: Int, requestLimit: Int?, duration: Duration?, rate: Double?, shape: LoadShape, progress: LoadRunner.Progress, seed: UInt64) async -> (Recorder, Duration) {
        let clock = ContinuousClock()
        let started = clock.now
        let start = NIODeadline.now()
        let deadline = duration.map { start + .nanoseconds(Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000) }
        let phase = LoadPhase(workload: workload, mix: mix, requestLimit: requestLimit, start: start, deadline: deadline, rate: rate, shape: shape, progress: progress)
        var results: [EventLoopFuture<Recorder>] = []
        for (index, channel) in channels.enumerated() {
            let slots = concurrency / channels.count + (index < concurrency % channels.count ? 1 : 0)
            let finished = channel.eventLoop.makePromise(of: Recorder.self)
            let start = StartPhase(phase: phase, slots: slots, index: index, connections: channels.count, concurrency: concurrency, seed: seed &+ UInt64(index) &* 0x9E37_79B9, finished: finished)
            channel.eventLoop.execute {
                // A closed channel's pipeline no longer has the handler.
                if channel.isActive {
                    channel.pipeline.fireUserInboundEventTriggered(start)
                } else {
                    finished.succeed(Recorder())
                }
            }
            results.append(finished.futureResult)
        }
        var merged = Recorder()
        for result in results {
            if let part = try? await result.get() { merged.merge(part) }
        }
        return (merged, clock.now - started)
    }

    /// Closes every connection and stops the event loops.
    func close() async {
        for channel in channels { try? await channel.close() }
        try? await group.shutdownGracefully()
    }
}
