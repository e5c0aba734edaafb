import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// On the listening socket: says when accepting fails, above all for want
/// of file descriptors (EMFILE, ENFILE), at most once a second. NIO's own
/// accept backoff (a second's pause after a failed accept) follows it in
/// the pipeline, so the server does not spin on a listener it cannot
/// accept from.
final class AcceptErrorLogger: ChannelInboundHandler {
    typealias InboundIn = any Channel

    private let logger: Logger
    private var lastLogged: NIODeadline?
    private var suppressed = 0

    init(logger: Logger) {
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let now = NIODeadline.now()
        if let last = lastLogged, now - last < .seconds(1) {
            suppressed += 1
        } else {
            var metadata: Logger.Metadata = ["error": "\(error)"]
            if suppressed > 0 { metadata["since_last"] = "\(suppressed) more" }
            if let io = error as? IOError, io.errnoCode == EMFILE || io.errnoCode == ENFILE {
                logger.error("cannot accept connections: out of file descriptors; pausing accepts (lower --max-connections or raise the process's descriptor limit)", metadata: metadata)
            } else {
                logger.warning("accepting a connection failed", metadata: metadata)
            }
            lastLogged = now
            suppressed = 0
        }
        context.fireErrorCaught(error)
    }
}
