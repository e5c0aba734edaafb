import CStrataZlib
import NIOCore

/// zlib (RFC 1950) compression of frame payloads, through the system zlib.
public enum Zlib {
    /// Deflates `input` at the default level.
    public static func deflate(_ input: ByteBuffer) throws -> ByteBuffer {
        var stream = z_stream()
        guard strata_deflateInit(&stream, Z_DEFAULT_COMPRESSION) == Z_OK else {
            throw WireError(.internal, "zlib: deflateInit failed")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.readableBytes)))
        var output = ByteBufferAllocator().buffer(capacity: bound)
        var finished = false
        input.withUnsafeReadableBytes { source in
            _ = output.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(target.count)
                finished = CStrataZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END
                return target.count - Int(stream.avail_out)
            }
        }
        guard finished else { throw WireError(.internal, "zlib: deflate did not finish") }
        return output
    }

    /// Inflates `input`, refusing output larger than `limit` bytes and
    /// input that is not a complete zlib stream.
    public static func inflate(_ input: ByteBuffer, limit: Int) throws -> ByteBuffer {
        var stream = z_stream()
        guard strata_inflateInit(&stream) == Z_OK else {
            throw WireError(.internal, "zlib: inflateInit failed")
        }
        defer { inflateEnd(&stream) }
        var output = ByteBufferAllocator().buffer(capacity: min(max(input.readableBytes * 4, 256), limit + 1))
        let chunk = 64 * 1024
        let result: Int32 = input.withUnsafeReadableBytes { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(source.count)
            var status = Z_OK
            while status == Z_OK {
                if output.readableBytes > limit { return Z_MEM_ERROR }
                let room = min(chunk, limit + 1 - output.readableBytes)
                _ = output.writeWithUnsafeMutableBytes(minimumWritableBytes: room) { target in
                    stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(room)
                    status = CStrataZlib.inflate(&stream, Z_NO_FLUSH)
                    return room - Int(stream.avail_out)
                }
                if status == Z_BUF_ERROR, stream.avail_in == 0 { return Z_DATA_ERROR }
                if status == Z_BUF_ERROR { status = Z_OK }
            }
            return status
        }
        if output.readableBytes > limit || result == Z_MEM_ERROR {
            throw WireError(.resourceExhausted, "compressed payload inflates past the limit of \(limit) bytes")
        }
        guard result == Z_STREAM_END else {
            throw WireError(.invalidArgument, "compressed payload is not a valid zlib stream (zlib status \(result))")
        }
        guard stream.avail_in == 0 else {
            throw WireError(.invalidArgument, "compressed payload has \(stream.avail_in) bytes after the end of its zlib stream")
        }
        return output
    }
}
