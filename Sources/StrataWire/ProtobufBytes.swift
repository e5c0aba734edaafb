import NIOCore
import SwiftProtobuf

/// A `ByteBuffer`'s readable bytes as SwiftProtobuf's bag of bytes, so a
/// message decodes straight from a frame's payload instead of from a copy
/// of it in a new array (one allocation and copy per frame).
public struct ProtobufBytes: SwiftProtobufContiguousBytes {
    /// The bytes (its readable part).
    public var buffer: ByteBuffer

    /// The readable bytes of `buffer` (not copied).
    public init(_ buffer: ByteBuffer) {
        self.buffer = buffer
    }

    /// `count` bytes of one value.
    public init(repeating: UInt8, count: Int) {
        buffer = ByteBuffer(repeating: repeating, count: count)
    }

    /// The bytes of a sequence.
    public init<S: Sequence>(_ sequence: S) where S.Element == UInt8 {
        buffer = ByteBuffer(bytes: sequence)
    }

    /// How many bytes.
    public var count: Int { buffer.readableBytes }

    /// Calls `body` with the readable bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeReadableBytes(body)
    }

    /// Calls `body` with the readable bytes, writable (copied first when shared).
    public mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeMutableReadableBytes(body)
    }
}
