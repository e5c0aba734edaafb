import Foundation
import Logging
import NIOConcurrencyHelpers
import StrataContext
import StrataModel
import StrataWire
import SwiftProtobuf

/// Runs one request frame's payload as a connection does after its hello
/// (decoded, checked, run against the stores) but without a socket, and
/// tells how it ended. The fuzz targets (`Fuzz/`) and their corpus replay
/// drive the server's request path through it; subscriptions are checked
/// as a subscribe is, not kept.
package struct RequestProbe: Sendable {
    /// How a request ended.
    package struct Outcome: Sendable {
        /// Frames answered before the final one (fetch batches).
        package var frames = 0
        /// The final status; nil for success.
        package var status: Strata_V1_Status?
    }

    let core: ServerCore

    /// A probe over `coordinator`'s stores with the server's default
    /// configuration; it logs nothing.
    package init(coordinator: Coordinator) {
        var logger = Logger(label: "strata.request-probe")
        logger.logLevel = .critical
        core = ServerCore(coordinator: coordinator, configuration: ServerConfiguration(port: 0), logger: logger)
    }

    /// Decodes `payload` as a `ClientFrame` and runs it; a payload that is
    /// not one ends as the connection's protocol error does.
    package func run(payload: [UInt8]) async -> Outcome {
        let frame: Strata_V1_ClientFrame
        do {
            frame = try Strata_V1_ClientFrame(serializedBytes: payload)
        } catch {
            return Outcome(status: WireError(.invalidArgument, "a frame of \(payload.count) bytes is not a valid ClientFrame message: \(error)").status)
        }
        return await run(frame)
    }

    /// Runs a decoded request as ``Session`` does after the hello.
    package func run(_ frame: Strata_V1_ClientFrame) async -> Outcome {
        var outcome = Outcome()
        do {
            guard frame.requestID != 0 else {
                throw WireError(.invalidArgument, "request_id 0 is reserved for server pushes")
            }
            switch frame.request {
            case .hello?:
                throw WireError(.failedPrecondition, "hello was already exchanged on this connection")
            case .ping?, .getModel?, .stats?:
                break
            case .fetch(let fetch)?:
                let frames = NIOLockedValueBox(0)
                try await core.fetch(fetch, clientName: "probe") { _, more in
                    if more { frames.withLockedValue { $0 += 1 } }
                }
                outcome.frames = frames.withLockedValue { $0 }
            case .save(let save)?:
                _ = try await core.save(save, clientName: "probe")
            case .refresh(let refresh)?:
                _ = try await core.refresh(refresh, clientName: "probe")
            case .subscribe(let subscribe)?:
                _ = try Session.subscription(for: subscribe, core: core)
            case .unsubscribe(let unsubscribe)?:
                throw WireError(.notFound, "no subscription \(unsubscribe.subscriptionID) on this connection")
            case .history(let history)?:
                _ = try await core.history(history)
            case .backup(let backup)?:
                let frames = NIOLockedValueBox(0)
                try await core.backup(backup) { _, more in
                    if more { frames.withLockedValue { $0 += 1 } }
                }
                outcome.frames = frames.withLockedValue { $0 }
            case nil:
                throw WireError(.unimplemented, "request \(frame.requestID) names no operation this server knows")
            }
        } catch {
            outcome.status = Session.failureStatus(error, operation: Session.operationName(frame.request), requestID: frame.requestID, redactor: core.redactor, logger: core.logger)
        }
        return outcome
    }
}
