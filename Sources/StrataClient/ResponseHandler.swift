import NIOCore
import StrataWire

/// Decodes the server's frames on the event loop and hands each to its
/// connection's ``ClientRouter``, which resumes the waiting request
/// directly (no reader task in between). A frame that is not a
/// `ServerFrame`, a read error, or the close fails the connection.
final class ResponseHandler: ChannelInboundHandler {
    typealias InboundIn = Frame

    private let router: ClientRouter
    private let endpoint: String

    init(router: ClientRouter, endpoint: String) {
        self.router = router
        self.endpoint = endpoint
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let message: Strata_V1_ServerFrame
        do {
            message = try Strata_V1_ServerFrame(serializedBytes: ProtobufBytes(frame.payload))
        } catch {
            router.fail(StrataClientError(.internal, "the server sent a frame that is not a ServerFrame: \(error)"))
            context.close(promise: nil)
            return
        }
        if router.deliver(message) {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        router.fail(StrataClientError(.unavailable, "connection to \(endpoint) closed by the server"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        router.fail(StrataClientError(.unavailable, ClientTLS.describe(error, endpoint: endpoint) ?? "connection to \(endpoint) lost: \(error)"))
        context.close(promise: nil)
    }
}
