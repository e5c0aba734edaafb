import NIOCore
import NIOEmbedded
import StrataWire
import SwiftProtobuf
import Testing
@testable import StrataServer

/// The frame deadline, watching a frame decoder on an embedded channel,
/// its clock moved by hand.
@Suite struct FrameDeadlineTests {
    static func channel(timeout: Duration = .seconds(30)) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(FrameDecodingHandler(FrameDecoder(maxFrameBytes: 64 << 20), observer: FrameDeadline(timeout: timeout)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 7420)).wait()
        return channel
    }

    static func header(length: UInt32) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(length)
        return buffer
    }

    /// Bytes arriving, then the next `read()`, as a channel with autoRead issues it.
    static func receive(_ channel: EmbeddedChannel, _ bytes: ByteBuffer) throws {
        try channel.writeInbound(bytes)
        channel.read()
    }

    /// The status frame the handler wrote, if any.
    static func writtenStatus(_ channel: EmbeddedChannel) throws -> Strata_V1_Status? {
        guard var out = try channel.readOutbound(as: ByteBuffer.self) else { return nil }
        out.moveReaderIndex(forwardBy: WireProtocol.headerSize)
        return try Strata_V1_ServerFrame(serializedBytes: Array(out.readableBytesView)).status
    }

    @Test("Whole frames, however far apart, are never cut")
    func wholeFrames() throws {
        let channel = try Self.channel()
        for _ in 0..<3 {
            var frame = Self.header(length: 3)
            frame.writeBytes([1, 2, 3])
            try Self.receive(channel, frame)
            channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        }
        #expect(channel.isActive)
        #expect(try Self.writtenStatus(channel) == nil)
        // The frames went on.
        for _ in 0..<3 { #expect(try channel.readInbound(as: Frame.self)?.payload == ByteBuffer(bytes: [1, 2, 3])) }
    }

    @Test("A frame still incomplete at the deadline closes the connection with DEADLINE_EXCEEDED")
    func slowFrame() throws {
        let channel = try Self.channel()
        try Self.receive(channel, ByteBuffer(bytes: [0, 0]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        try Self.receive(channel, ByteBuffer(bytes: [0, 0, 9, 1]))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(11))
        let status = try #require(try Self.writtenStatus(channel))
        #expect(status.code == .deadlineExceeded)
        #expect(!channel.isActive)
    }

    @Test("A frame completed in time disarms the deadline; the next frame gets its own")
    func nextFrameHasItsOwnDeadline() throws {
        let channel = try Self.channel()
        try Self.receive(channel, ByteBuffer(bytes: [0, 0, 0, 0]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        // The first frame ends (empty payload) and a second begins in the same read.
        try Self.receive(channel, ByteBuffer(bytes: [1, 0, 0]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive, "the second frame has 30 s from its own first byte")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try Self.writtenStatus(channel)?.code == .deadlineExceeded)
    }

    @Test("A large payload gets a second more per MiB")
    func largePayload() throws {
        let channel = try Self.channel()
        try Self.receive(channel, Self.header(length: 4 << 20))
        channel.embeddedEventLoop.advanceTime(by: .seconds(32))
        #expect(channel.isActive, "30 s + 4 s for 4 MiB")
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(try Self.writtenStatus(channel)?.code == .deadlineExceeded)
        #expect(!channel.isActive)
    }

    @Test("Time the server does not read does not count: the deadline starts over when reading resumes")
    func serverBackpressureIsNotTheClientsDelay() throws {
        let channel = try Self.channel()
        // A partial frame, and the server withholds its next read.
        try channel.writeInbound(ByteBuffer(bytes: [0, 0, 0]))
        channel.embeddedEventLoop.advanceTime(by: .seconds(45))
        #expect(channel.isActive, "the server was not reading")
        #expect(try Self.writtenStatus(channel) == nil)
        // Reading resumes: the client has 30 s from now.
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(try Self.writtenStatus(channel)?.code == .deadlineExceeded)
    }
}
