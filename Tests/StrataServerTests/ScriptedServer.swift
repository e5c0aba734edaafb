import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import StrataWire

/// A stand-in for `strata-server` on 127.0.0.1 that answers each request
/// as a test scripts it, for client behaviour a real server does not
/// produce on demand (a subscribe refused only on the second connection).
///
/// The script gets the connection's number (0 for the first accepted) and
/// the request, and answers the frames to send back, and whether to close
/// the connection after them.
final class ScriptedServer: Sendable {
    /// What the script answers to one request.
    struct Reply: Sendable {
        var frames: [Strata_V1_ServerFrame]
        var thenClose = false
    }

    typealias Script = @Sendable (_ connection: Int, _ request: Strata_V1_ClientFrame) -> Reply

    let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    /// Listens on a free loopback port.
    static func start(_ script: @escaping Script) async throws -> ScriptedServer {
        let accepted = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                let number = accepted.withLockedValue { count in
                    defer { count += 1 }
                    return count
                }
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                    try child.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                    try child.pipeline.syncOperations.addHandler(ScriptHandler(connection: number, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try await channel.close()
            throw ScriptedServerError(message: "the scripted server has no port")
        }
        return ScriptedServer(port: port, channel: channel)
    }

    /// Stops listening (accepted connections close with their clients).
    func stop() async {
        try? await channel.close()
    }

    /// A hello answer.
    static func hello(_ request: Strata_V1_ClientFrame) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.requestID = request.requestID
            $0.response = .hello(Strata_V1_HelloResponse.with { $0.version = WireProtocol.version })
        }
    }

    /// A subscribe answer with this subscription ID.
    static func subscribed(_ request: Strata_V1_ClientFrame, id: UInt64) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.requestID = request.requestID
            $0.response = .subscribe(Strata_V1_SubscribeResponse.with { $0.subscriptionID = id })
        }
    }

    /// A refusal with this status.
    static func refused(_ request: Strata_V1_ClientFrame, _ code: Strata_V1_StatusCode, _ message: String) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.requestID = request.requestID
            $0.status = Strata_V1_Status.with {
                $0.code = code
                $0.message = message
            }
        }
    }

    /// A change notification for a subscription.
    static func notification(subscription id: UInt64, origin: String) -> Strata_V1_ServerFrame {
        Strata_V1_ServerFrame.with {
            $0.response = .notification(Strata_V1_ChangeNotification.with {
                $0.subscriptionID = id
                $0.origin = origin
            })
        }
    }
}

/// Why the scripted server could not start.
struct ScriptedServerError: Error {
    let message: String
}

/// Answers one connection's requests through the script.
private final class ScriptHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = Frame
    typealias OutboundOut = Frame

    let connection: Int
    let script: ScriptedServer.Script

    init(connection: Int, script: @escaping ScriptedServer.Script) {
        self.connection = connection
        self.script = script
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard let request = try? Strata_V1_ClientFrame(serializedBytes: Array(frame.payload.readableBytesView)) else {
            context.close(promise: nil)
            return
        }
        let reply = script(connection, request)
        for answer in reply.frames {
            guard let bytes: [UInt8] = try? answer.serializedBytes() else { continue }
            context.write(wrapOutboundOut(Frame(payload: ByteBuffer(bytes: bytes))), promise: nil)
        }
        context.flush()
        if reply.thenClose { context.close(promise: nil) }
    }
}
