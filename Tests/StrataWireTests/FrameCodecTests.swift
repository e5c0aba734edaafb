import Foundation
import NIOCore
import NIOEmbedded
import NIOTestUtils
@testable import StrataWire
import SwiftProtobuf
import Testing

/// The length-prefixed framing: FrameDecoder (in a FrameDecodingHandler on
/// an EmbeddedChannel, as the server and client run it, and in NIO's
/// ByteToMessageHandler, which must read the same), FrameEncoder and the
/// zlib layer. No I/O.
@Suite("Frame codec")
struct FrameCodecTests {
    // MARK: Helpers

    /// What feeding some chunks to a decoder produced.
    struct Decoded {
        var frames: [Frame] = []
        /// Frames available after each chunk was written (cumulative).
        var framesAfterChunk: [Int] = []
        var error: WireError?
        var otherError: (any Error)?
    }

    /// The handler a decoder runs in.
    enum Handler: CaseIterable, Sendable {
        /// ``FrameDecodingHandler``, the server's and the client's.
        case decoding
        /// NIO's `ByteToMessageHandler`.
        case byteToMessage
    }

    /// Feeds `chunks` to a fresh FrameDecoder in `handler`, one
    /// `writeInbound` each, then (when `finish`) closes the channel so
    /// `decodeLast` runs.
    static func decode(_ chunks: [ByteBuffer], maxFrameBytes: Int = WireProtocol.defaultMaxFrameBytes, finish: Bool = true,
                       handler: Handler = .decoding) throws -> Decoded {
        let channel = EmbeddedChannel()
        switch handler {
        case .decoding:
            try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder(maxFrameBytes: maxFrameBytes)))
        case .byteToMessage:
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maxFrameBytes: maxFrameBytes)))
        }
        var result = Decoded()
        func drain() throws {
            while let frame = try channel.readInbound(as: Frame.self) {
                result.frames.append(frame)
            }
        }
        do {
            for chunk in chunks {
                try channel.writeInbound(chunk)
                try drain()
                result.framesAfterChunk.append(result.frames.count)
            }
            if finish {
                _ = try channel.finish()
                try drain()
            }
        } catch let error as WireError {
            result.error = error
            try? drain()
        } catch {
            result.otherError = error
        }
        if !finish { _ = try? channel.finish() }
        return result
    }

    /// The bytes of `frames` as FrameEncoder writes them.
    static func encode(_ frames: [Frame]) -> ByteBuffer {
        var out = ByteBuffer()
        for frame in frames { FrameEncoder.write(frame, into: &out) }
        return out
    }

    /// A frame header and payload written by hand.
    static func rawFrame(flags: UInt8, length: UInt32? = nil, payload: [UInt8]) -> ByteBuffer {
        var out = ByteBuffer()
        out.writeInteger(flags)
        out.writeInteger(length ?? UInt32(payload.count))
        out.writeBytes(payload)
        return out
    }

    /// `buffer` split into one-byte buffers.
    static func bytewise(_ buffer: ByteBuffer) -> [ByteBuffer] {
        buffer.readableBytesView.map { ByteBuffer(bytes: [$0]) }
    }

    /// A serialized ClientFrame carrying a ping.
    static func pingPayload(id: UInt64, payload: [UInt8] = Array("hello".utf8)) throws -> ByteBuffer {
        let frame = Strata_V1_ClientFrame.with {
            $0.requestID = id
            $0.ping = Strata_V1_PingRequest.with { $0.payload = Data(payload) }
        }
        return ByteBuffer(bytes: try frame.serializedBytes() as [UInt8])
    }

    /// Bytes that compress well but are not all alike.
    static func compressible(_ count: Int) -> ByteBuffer {
        ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: ($0 / 7) % 13 + 65) })
    }

    // MARK: Decoding whole and split

    @Test("A frame written whole decodes to the same payload")
    func wholeFrame() throws {
        let payload = try Self.pingPayload(id: 42)
        let decoded = try Self.decode([Self.encode([Frame(payload: payload)])])
        #expect(decoded.error == nil)
        #expect(decoded.otherError == nil)
        let frame = try #require(decoded.frames.first)
        #expect(decoded.frames.count == 1)
        #expect(frame.payload == payload)
        #expect(frame.compressed == false)
        let message = try Strata_V1_ClientFrame(serializedBytes: Array(frame.payload.readableBytesView))
        #expect(message.requestID == 42)
        #expect(message.ping.payload == Data("hello".utf8))
    }

    @Test("The encoder writes flag 0, a big-endian length and the payload")
    func encoderLayout() throws {
        let payload = ByteBuffer(bytes: [0xAA, 0xBB, 0xCC])
        let bytes = Array(Self.encode([Frame(payload: payload)]).readableBytesView)
        #expect(bytes == [0x00, 0x00, 0x00, 0x00, 0x03, 0xAA, 0xBB, 0xCC])
        // An empty payload is a valid frame of five bytes.
        let empty = Array(Self.encode([Frame(payload: ByteBuffer())]).readableBytesView)
        #expect(empty == [0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test("A frame fed one byte at a time decodes once, after its last byte")
    func byteByByte() throws {
        let payload = try Self.pingPayload(id: 7, payload: Array(repeating: 0x5A, count: 300))
        let bytes = Self.encode([Frame(payload: payload)])
        let decoded = try Self.decode(Self.bytewise(bytes))
        #expect(decoded.error == nil)
        #expect(decoded.frames == [Frame(payload: payload)])
        // Nothing comes out before the last byte.
        #expect(decoded.framesAfterChunk.dropLast().allSatisfy { $0 == 0 })
        #expect(decoded.framesAfterChunk.last == 1)
    }

    @Test("Several frames, plain, empty and compressed, fed one byte at a time")
    func severalFramesByteByByte() throws {
        let frames = [
            Frame(payload: try Self.pingPayload(id: 1)),
            Frame(payload: ByteBuffer()),
            Frame(payload: Self.compressible(5000), compressed: true),
            Frame(payload: try Self.pingPayload(id: 2)),
        ]
        let bytes = Self.encode(frames)
        let decoded = try Self.decode(Self.bytewise(bytes))
        #expect(decoded.error == nil)
        #expect(decoded.otherError == nil)
        #expect(decoded.frames == frames)
        // Each frame comes out exactly when its last byte arrives.
        var ends: [Int] = []
        var probe = bytes
        for _ in frames {
            let header = probe.getInteger(at: probe.readerIndex + 1, as: UInt32.self)
            let length = Int(try #require(header))
            probe.moveReaderIndex(forwardBy: WireProtocol.headerSize + length)
            ends.append(probe.readerIndex)
        }
        for (index, end) in ends.enumerated() {
            #expect(decoded.framesAfterChunk[end - 1] == index + 1)
            if end >= 2 { #expect(decoded.framesAfterChunk[end - 2] == index) }
        }
    }

    @Test("Several frames in one buffer all decode, in order")
    func severalFramesInOneBuffer() throws {
        let frames = try (1...50).map { Frame(payload: try Self.pingPayload(id: UInt64($0))) }
        let decoded = try Self.decode([Self.encode(frames)])
        #expect(decoded.error == nil)
        #expect(decoded.frames == frames)
        let ids = try decoded.frames.map { try Strata_V1_ClientFrame(serializedBytes: Array($0.payload.readableBytesView)).requestID }
        #expect(ids == Array(1...50))
    }

    @Test("Frames split at arbitrary points decode the same", arguments: [2, 3, 5, 13, 64, 1000])
    func arbitrarySplits(chunkSize: Int) throws {
        let frames = [
            Frame(payload: try Self.pingPayload(id: 1)),
            Frame(payload: Self.compressible(3000), compressed: true),
            Frame(payload: ByteBuffer()),
            Frame(payload: Self.compressible(700)),
        ]
        var bytes = Self.encode(frames)
        var chunks: [ByteBuffer] = []
        while bytes.readableBytes > 0 {
            chunks.append(bytes.readSlice(length: min(chunkSize, bytes.readableBytes))!)
        }
        let decoded = try Self.decode(chunks)
        #expect(decoded.error == nil)
        #expect(decoded.frames == frames)
    }

    // MARK: Refusals

    @Test("Unknown flag bits are INVALID_ARGUMENT naming the frame's byte offset", arguments: [UInt8(0x02), 0x03, 0x04, 0x80, 0xFF])
    func unknownFlagBits(flags: UInt8) throws {
        let first = Self.encode([Frame(payload: try Self.pingPayload(id: 1))])
        let offset = first.readableBytes
        var stream = first
        stream.writeImmutableBuffer(Self.rawFrame(flags: flags, payload: [0x08, 0x02]))
        let decoded = try Self.decode([stream])
        #expect(decoded.frames.count == 1, "the frame before the bad one is delivered")
        let error = try #require(decoded.error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("byte offset \(offset)"), "\(error.message)")
        #expect(error.message.contains("0x\(String(flags, radix: 16))"), "\(error.message)")
    }

    @Test("Unknown flag bits are refused from the header alone, byte by byte too")
    func unknownFlagBitsBytewise() throws {
        let decoded = try Self.decode(Self.bytewise(Self.rawFrame(flags: 0x40, payload: [1, 2, 3])), finish: false)
        let error = try #require(decoded.error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("byte offset 0"), "\(error.message)")
    }

    @Test("A length over the limit is RESOURCE_EXHAUSTED before the payload arrives")
    func lengthOverLimit() throws {
        let limit = 64 * 1024
        let prefix = Self.encode([Frame(payload: ByteBuffer(bytes: [1, 2, 3]))])
        var header = prefix
        header.writeInteger(UInt8(0))
        header.writeInteger(UInt32(limit + 1))
        // Only the header: the decoder must not wait for 64 KiB it will refuse.
        let decoded = try Self.decode([header], maxFrameBytes: limit, finish: false)
        #expect(decoded.frames.count == 1)
        let error = try #require(decoded.error)
        #expect(error.code == .resourceExhausted)
        #expect(error.message.contains("byte offset \(prefix.readableBytes)"), "\(error.message)")
        #expect(error.message.contains("\(limit)"), "\(error.message)")

        // The largest length there is, too.
        var huge = ByteBuffer()
        huge.writeInteger(UInt8(0))
        huge.writeInteger(UInt32.max)
        let hugeDecoded = try Self.decode([huge], maxFrameBytes: limit, finish: false)
        #expect(hugeDecoded.error?.code == .resourceExhausted)
    }

    @Test("A payload of exactly the limit is accepted")
    func lengthAtLimit() throws {
        let limit = 4096
        let payload = Self.compressible(limit)
        let decoded = try Self.decode([Self.encode([Frame(payload: payload)])], maxFrameBytes: limit)
        #expect(decoded.error == nil)
        #expect(decoded.frames == [Frame(payload: payload)])
    }

    // MARK: Compression

    @Test("A compressed frame round-trips through FrameEncoder and FrameDecoder")
    func compressedRoundTrip() throws {
        let payload = Self.compressible(100_000)
        let bytes = Self.encode([Frame(payload: payload, compressed: true)])
        #expect(bytes.getInteger(at: 0, as: UInt8.self) == WireProtocol.compressedFlag)
        let length = try #require(bytes.getInteger(at: 1, as: UInt32.self))
        #expect(Int(length) == bytes.readableBytes - WireProtocol.headerSize)
        #expect(Int(length) < payload.readableBytes / 10, "deflated to \(length) bytes")
        let decoded = try Self.decode([bytes])
        #expect(decoded.error == nil)
        let frame = try #require(decoded.frames.first)
        #expect(frame.compressed)
        #expect(frame.payload == payload)
    }

    @Test("MessageToByteHandler(FrameEncoder) in a pipeline writes what FrameDecoder reads")
    func encoderHandlerRoundTrip() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
        let frames = [
            Frame(payload: try Self.pingPayload(id: 9)),
            Frame(payload: Self.compressible(20_000), compressed: true),
        ]
        var wire = ByteBuffer()
        for frame in frames {
            try channel.writeOutbound(frame)
            while var chunk = try channel.readOutbound(as: ByteBuffer.self) {
                wire.writeBuffer(&chunk)
            }
        }
        _ = try channel.finish()
        let decoded = try Self.decode([wire])
        #expect(decoded.frames == frames)
    }

    @Test("A payload inflating past the limit (zip bomb) is RESOURCE_EXHAUSTED")
    func zipBomb() throws {
        let limit = 64 * 1024
        let zeros = ByteBuffer(repeating: 0, count: 1024 * 1024)
        let bomb = try Zlib.deflate(zeros)
        #expect(bomb.readableBytes < limit, "the bomb itself is small: \(bomb.readableBytes) bytes")
        let prefix = Self.encode([Frame(payload: ByteBuffer(bytes: [1]))])
        var stream = prefix
        stream.writeImmutableBuffer(Self.rawFrame(flags: WireProtocol.compressedFlag, payload: Array(bomb.readableBytesView)))
        let decoded = try Self.decode([stream], maxFrameBytes: limit, finish: false)
        #expect(decoded.frames.count == 1)
        let error = try #require(decoded.error)
        #expect(error.code == .resourceExhausted)
        #expect(error.message.contains("byte offset \(prefix.readableBytes)"), "\(error.message)")

        // Zlib itself stops at the limit rather than inflating the megabyte.
        #expect(throws: WireError.self) { try Zlib.inflate(bomb, limit: limit) }
        do {
            _ = try Zlib.inflate(bomb, limit: limit)
        } catch let error as WireError {
            #expect(error.code == .resourceExhausted)
        }
    }

    @Test("Inflating to exactly the limit is accepted; one byte more is not")
    func inflateLimitBoundary() throws {
        let limit = 64 * 1024
        let exact = ByteBuffer(repeating: 7, count: limit)
        #expect(try Zlib.inflate(try Zlib.deflate(exact), limit: limit) == exact)
        let decoded = try Self.decode([Self.encode([Frame(payload: exact, compressed: true)])], maxFrameBytes: limit)
        #expect(decoded.error == nil)
        #expect(decoded.frames.first?.payload == exact)

        let over = ByteBuffer(repeating: 7, count: limit + 1)
        do {
            _ = try Zlib.inflate(try Zlib.deflate(over), limit: limit)
            Issue.record("inflating \(limit + 1) bytes with a limit of \(limit) succeeded")
        } catch let error as WireError {
            #expect(error.code == .resourceExhausted)
        }
    }

    @Test("Bytes that are not zlib are INVALID_ARGUMENT")
    func invalidZlib() throws {
        let garbage: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01, 0x02, 0x03, 0x04]
        let decoded = try Self.decode([Self.rawFrame(flags: WireProtocol.compressedFlag, payload: garbage)], finish: false)
        let error = try #require(decoded.error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("byte offset 0"), "\(error.message)")

        // An empty compressed payload is not a zlib stream either.
        let empty = try Self.decode([Self.rawFrame(flags: WireProtocol.compressedFlag, payload: [])], finish: false)
        #expect(empty.error?.code == .invalidArgument)
    }

    @Test("A cut-off zlib stream and trailing bytes after one are INVALID_ARGUMENT")
    func truncatedAndTrailingZlib() throws {
        let deflated = try Zlib.deflate(Self.compressible(10_000))
        let cut = ByteBuffer(bytes: Array(deflated.readableBytesView.dropLast(6)))
        do {
            _ = try Zlib.inflate(cut, limit: 1 << 20)
            Issue.record("a truncated zlib stream inflated")
        } catch let error as WireError {
            #expect(error.code == .invalidArgument)
        }
        var trailing = deflated
        trailing.writeBytes([0x00, 0x01])
        do {
            _ = try Zlib.inflate(trailing, limit: 1 << 20)
            Issue.record("a zlib stream with trailing bytes inflated")
        } catch let error as WireError {
            #expect(error.code == .invalidArgument)
        }
        let decoded = try Self.decode([Self.rawFrame(flags: WireProtocol.compressedFlag, payload: Array(cut.readableBytesView))], finish: false)
        #expect(decoded.error?.code == .invalidArgument)
    }

    @Test("An empty payload deflates and inflates")
    func emptyCompressed() throws {
        let decoded = try Self.decode([Self.encode([Frame(payload: ByteBuffer(), compressed: true)])])
        #expect(decoded.error == nil)
        #expect(decoded.frames == [Frame(payload: ByteBuffer(), compressed: true)])
    }

    // MARK: End of stream

    @Test("End of stream inside a frame is an error naming its offset", arguments: [1, 3, 5, 9])
    func truncatedAtEOF(keep: Int) throws {
        let first = Self.encode([Frame(payload: try Self.pingPayload(id: 1))])
        let second = Self.encode([Frame(payload: try Self.pingPayload(id: 2))])
        var stream = first
        stream.writeBytes(Array(second.readableBytesView.prefix(keep)))
        let decoded = try Self.decode([stream])
        #expect(decoded.frames.count == 1)
        let error = try #require(decoded.error)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("byte offset \(first.readableBytes)"), "\(error.message)")
        #expect(error.message.contains("\(keep) bytes"), "\(error.message)")
    }

    @Test("End of stream between frames is clean")
    func cleanEOF() throws {
        let decoded = try Self.decode([Self.encode([Frame(payload: try Self.pingPayload(id: 1))])])
        #expect(decoded.error == nil)
        #expect(decoded.otherError == nil)
        #expect(decoded.frames.count == 1)
        let nothing = try Self.decode([])
        #expect(nothing.error == nil)
        #expect(nothing.frames.isEmpty)
    }

    // MARK: The decoding handler

    @Test("Both handlers read the same frames, errors and offsets from the same chunks", arguments: [1, 4, 7, 1000])
    func bothHandlersAgree(chunkSize: Int) throws {
        var stream = Self.encode([Frame(payload: try Self.pingPayload(id: 1)), Frame(payload: ByteBuffer()),
                                  Frame(payload: try Self.pingPayload(id: 3), compressed: true)])
        // A frame over the limit, then one that must not be decoded.
        stream.writeImmutableBuffer(Self.rawFrame(flags: 0, length: 1 << 20, payload: []))
        stream.writeImmutableBuffer(Self.encode([Frame(payload: try Self.pingPayload(id: 5))]))
        var chunks: [ByteBuffer] = []
        var rest = stream
        while rest.readableBytes > 0 { chunks.append(rest.readSlice(length: min(chunkSize, rest.readableBytes))!) }
        let ours = try Self.decode(chunks, maxFrameBytes: 4096)
        let nios = try Self.decode(chunks, maxFrameBytes: 4096, handler: .byteToMessage)
        #expect(ours.frames.count == 3)
        #expect(ours.frames == nios.frames)
        #expect(ours.framesAfterChunk == nios.framesAfterChunk)
        #expect(ours.error?.code == .resourceExhausted)
        #expect(ours.error?.message == nios.error?.message)
    }

    /// Writes more bytes into the pipeline from inside its first frame's
    /// `channelRead`, as a handler reading more at once would.
    private final class Reentering: ChannelInboundHandler {
        typealias InboundIn = Frame
        var more: ByteBuffer?
        var seen: [UInt64] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if let id = try? Strata_V1_ClientFrame(serializedBytes: Array(frame.payload.readableBytesView)).requestID { seen.append(id) }
            if let bytes = more {
                more = nil
                context.pipeline.syncOperations.fireChannelRead(NIOAny(bytes))
            }
        }
    }

    @Test("Bytes that arrive while a frame is passed on are decoded after the frames before them")
    func reentrantBytesKeepTheirOrder() throws {
        let channel = EmbeddedChannel()
        let reentering = Reentering()
        try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(reentering)
        var first = Self.encode([Frame(payload: try Self.pingPayload(id: 1)), Frame(payload: try Self.pingPayload(id: 2))])
        // The third frame's first bytes end the first read.
        let third = Self.encode([Frame(payload: try Self.pingPayload(id: 3))])
        first.writeBytes(Array(third.readableBytesView.prefix(3)))
        var more = ByteBuffer(bytes: Array(third.readableBytesView.dropFirst(3)))
        more.writeImmutableBuffer(Self.encode([Frame(payload: try Self.pingPayload(id: 4))]))
        reentering.more = more
        try channel.writeInbound(first)
        #expect(reentering.seen == [1, 2, 3, 4])
        _ = try channel.finish()
    }

    @Test("The input closing inside a frame is an error; closing between frames is clean")
    func inputClosed() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder()))
        var stream = Self.encode([Frame(payload: try Self.pingPayload(id: 1))])
        stream.writeBytes([0, 0])
        try channel.writeInbound(stream)
        #expect(try channel.readInbound(as: Frame.self) != nil)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(throws: WireError.self) { try channel.throwIfErrorCaught() }
        _ = try? channel.finish()

        let clean = EmbeddedChannel()
        try clean.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder()))
        try clean.writeInbound(Self.encode([Frame(payload: try Self.pingPayload(id: 1))]))
        clean.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        try clean.throwIfErrorCaught()
        #expect(try clean.readInbound(as: Frame.self) != nil)
        _ = try clean.finish()
    }

    @Test("Reads that keep ending inside frames do not grow what is kept")
    func keptBytesStayBounded() throws {
        let channel = EmbeddedChannel()
        let handler = FrameDecodingHandler(FrameDecoder())
        try channel.pipeline.syncOperations.addHandler(handler)
        let frame = Self.encode([Frame(payload: ByteBuffer(bytes: [UInt8](repeating: 7, count: 100)))])
        // 10,000 frames (about 1 MB), every read ending 50 bytes into a frame.
        var stream = ByteBuffer()
        for _ in 0..<10_000 { stream.writeImmutableBuffer(frame) }
        var decoded = 0
        var largest = 0
        try channel.writeInbound(stream.readSlice(length: 50)!)
        while stream.readableBytes > 0 {
            try channel.writeInbound(stream.readSlice(length: min(frame.readableBytes, stream.readableBytes))!)
            while try channel.readInbound(as: Frame.self) != nil { decoded += 1 }
            largest = max(largest, handler.keptCapacity)
        }
        #expect(decoded == 10_000)
        #expect(largest > 0 && largest <= 1024, "kept \(largest) bytes")
        _ = try channel.finish()
    }

    @Test("FrameDecoder passes swift-nio's decoder verifier: every split of the input, and end of stream")
    func passesTheDecoderVerifier() throws {
        let frames = [
            Frame(payload: try Self.pingPayload(id: 1)),
            Frame(payload: ByteBuffer()),
            Frame(payload: try Self.pingPayload(id: 3, payload: Array(repeating: 7, count: 300)), compressed: true),
        ]
        let pairs = frames.map { (Self.encode([$0]), [$0]) } + [(Self.encode(frames), frames)]
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { FrameDecoder() }
    }
}
