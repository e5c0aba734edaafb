import NIOCore
import StrataWire
import SwiftProtobuf

/// The frame decoder as a connection runs it: bytes arrive in pieces (the
/// first input byte sets their size), each piece is decoded until no
/// frame is complete, the end of input is decoded last, and every frame's
/// payload is read as a `ClientFrame`. The first frame is held to the
/// hello's limit, as on the server.
enum FrameTarget {
    /// A small limit, so that the fuzzer reaches it.
    static let maxFrameBytes = 4096

    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        guard let first = input.first else { return }
        let pieceSize = Int(first % 16) + 1
        let limit = FrameLimit(min(WireProtocol.helloFrameBytes, maxFrameBytes) / 4)
        var decoder = FrameDecoder(limit: limit)
        var buffer = ByteBuffer()
        var frames = 0
        var offset = 1
        do {
            while offset < input.count {
                let end = min(offset + pieceSize, input.count)
                buffer.writeBytes(input[offset..<end])
                offset = end
                while let frame = try decoder.decode(buffer: &buffer) {
                    try check(frame, limit: limit.current)
                    frames += 1
                    // After the "hello", the connection's full limit.
                    limit.set(maxFrameBytes)
                }
            }
            while let frame = try decoder.decodeLast(buffer: &buffer, seenEOF: true) {
                try check(frame, limit: limit.current)
                frames += 1
            }
        } catch let error as WireError {
            guard error.code == .invalidArgument || error.code == .resourceExhausted else {
                throw FuzzFinding(.frame, "refused with \(error.code), not INVALID_ARGUMENT or RESOURCE_EXHAUSTED: \(error.message)")
            }
            guard error.message.contains("byte offset") else {
                throw FuzzFinding(.frame, "a refusal that names no byte offset: \(error.message)")
            }
        } catch let finding as FuzzFinding {
            throw finding
        } catch {
            throw FuzzFinding(.frame, "an error that is not a WireError: \(error)")
        }
    }

    private static func check(_ frame: Frame, limit: Int) throws(FuzzFinding) {
        guard frame.payload.readableBytes <= limit else {
            throw FuzzFinding(.frame, "a payload of \(frame.payload.readableBytes) bytes passed the limit of \(limit)")
        }
        // Whatever the bytes, decoding the message answers or refuses.
        let decoded = try? Strata_V1_ClientFrame(serializedBytes: Array(frame.payload.readableBytesView))
        // The scans the event loop reads frames with agree with the decoder
        // whenever they answer.
        if let scan = SaveFrameScan(scanning: frame.payload) {
            guard let decoded, case .save(let save)? = decoded.request, decoded.requestID == scan.requestID,
                  canonical(save) == canonical(scan.save) else {
                throw FuzzFinding(.frame, "the save scan read a frame otherwise than the decoder: \(Array(frame.payload.readableBytesView))")
            }
        }
        if let scan = FetchFrameScan(scanning: frame.payload) {
            guard let decoded, case .fetch(let fetch)? = decoded.request, decoded.requestID == scan.requestID,
                  canonical(fetch) == canonical(scan.fetch) else {
                throw FuzzFinding(.frame, "the fetch scan read a frame otherwise than the decoder: \(Array(frame.payload.readableBytesView))")
            }
        }
        if let scan = RefreshFrameScan(scanning: frame.payload) {
            guard let decoded, case .refresh(let refresh)? = decoded.request, decoded.requestID == scan.requestID, refresh.ids == scan.ids,
                  refresh.skipFetched == scan.skipFetched, refresh.includeFetched.isEmpty != scan.namesFetched,
                  refresh.includeRelationships.isEmpty != scan.namesRelationships else {
                throw FuzzFinding(.frame, "the refresh scan read a frame otherwise than the decoder: \(Array(frame.payload.readableBytesView))")
            }
        }
    }

    /// A message's bytes with its map entries in key order (doubles, NaNs
    /// among them, compared by their bits).
    private static func canonical(_ message: some SwiftProtobuf.Message) -> [UInt8]? {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        return try? message.serializedBytes(options: options)
    }
}
