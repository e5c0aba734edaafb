import Foundation

/// Reads a file (or standard input) in chunks and hands out its records
/// one at a time, so that an import of any size holds one chunk and one
/// save's objects in memory: lines of newline-delimited JSON, or CSV
/// records (RFC 4180: quoted fields may hold commas, quotes doubled, and
/// line breaks; CRLF or LF line ends).
struct RecordReader {
    /// The kinds of input.
    enum Kind {
        case lines
        case csv
    }

    private let handle: FileHandle
    private let kind: Kind
    private var buffer: [UInt8] = []
    private var position = 0
    private var finished = false
    /// The input line the next record starts on (1-based), for messages.
    private(set) var line = 1

    /// Reads `path` (`-` for standard input).
    init(path: String, kind: Kind) throws(CLIError) {
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: path) else { throw .usage("cannot read \(path)") }
            handle = opened
        }
        self.kind = kind
    }

    /// The next byte, reading a chunk when the buffer is spent; nil at the end.
    private mutating func nextByte() -> UInt8? {
        if position == buffer.count {
            guard !finished else { return nil }
            let chunk = (try? handle.read(upToCount: 1 << 16)) ?? nil
            guard let chunk, !chunk.isEmpty else {
                finished = true
                return nil
            }
            buffer = [UInt8](chunk)
            position = 0
        }
        defer { position += 1 }
        return buffer[position]
    }

    /// The next line (without its line end), nil at the end of the input.
    mutating func nextLine() -> String? {
        var bytes: [UInt8] = []
        while let byte = nextByte() {
            if byte == UInt8(ascii: "\n") {
                line += 1
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes.append(byte)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// The next CSV record's fields, nil at the end of the input. Throws on
    /// a quote that is never closed.
    mutating func nextRecord() throws(CLIError) -> [String]? {
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false, wasQuoted = false, sawAnything = false
        let start = line
        while let byte = nextByte() {
            sawAnything = true
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    // A doubled quote is one quote; a single one closes.
                    if let next = peekByte(), next == UInt8(ascii: "\"") {
                        _ = nextByte()
                        field.append(byte)
                    } else {
                        quoted = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                if field.isEmpty, !wasQuoted { quoted = true; wasQuoted = true } else { field.append(byte) }
            case UInt8(ascii: ","):
                fields.append(String(decoding: field, as: UTF8.self))
                field = []
                wasQuoted = false
            case UInt8(ascii: "\n"):
                line += 1
                if field.last == UInt8(ascii: "\r"), !wasQuoted { field.removeLast() }
                fields.append(String(decoding: field, as: UTF8.self))
                return fields
            case UInt8(ascii: "\r") where wasQuoted:
                break
            default:
                field.append(byte)
            }
        }
        if quoted { throw .invalid("line \(start): a quoted CSV field is never closed") }
        guard sawAnything else { return nil }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    /// The byte after the current one, without taking it.
    private mutating func peekByte() -> UInt8? {
        guard let byte = nextByte() else { return nil }
        position -= 1
        return byte
    }
}
