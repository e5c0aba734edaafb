import Foundation
import GRDB
import GRDBSQLite
import StrataQuery

/// A value ``SQLiteStatementRunner`` binds: text and blobs of at most
/// ``SQLiteRunnerBinding/copyLimit`` bytes are copied into the run's
/// buffer and bound from there without SQLite copying them again.
protocol SQLiteRunnerValue {
    /// The bytes it takes in the run's buffer.
    var copiedBytes: Int { get }
    /// Binds it to parameter `index`, from its copy in `buffer` at `offset`
    /// (moved past it) when it has one; SQLite's result code.
    func bind(to statement: SQLiteStatement, at index: CInt, buffer: UnsafeMutableRawBufferPointer, offset: inout Int) -> CInt
}

/// How ``SQLiteRunnerValue``s are bound.
enum SQLiteRunnerBinding {
    /// SQLite uses the bytes it is given without copying them: they must
    /// stay until the binding is replaced or cleared.
    static let unmanaged: sqlite3_destructor_type? = nil
    /// SQLite copies the bytes it is given before the bind returns.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// Values up to this size are copied into the run's buffer; larger ones
    /// (rare: a big text or blob) are handed to SQLite to copy, so that
    /// the buffer stays small and a value SQLite refuses (past its length
    /// limit) is never copied first.
    static let copyLimit = 64 * 1024

    /// The bytes a value of `count` bytes takes in the run's buffer.
    static func copied(_ count: Int) -> Int {
        count <= copyLimit ? count : 0
    }

    /// Binds `bytes` as a blob, from a copy in `buffer` at `offset` (moved
    /// past it) when they fit, else copied by SQLite (empty bytes, which no
    /// caller passes, as a zero-length blob).
    static func bindBlob(_ bytes: UnsafeRawBufferPointer, to statement: SQLiteStatement, at index: CInt, buffer: UnsafeMutableRawBufferPointer, offset: inout Int) -> CInt {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
        guard bytes.count <= copyLimit, let base = buffer.baseAddress, offset + bytes.count <= buffer.count else {
            return sqlite3_bind_blob64(statement, index, source, sqlite3_uint64(bytes.count), transient)
        }
        let copy = base + offset
        copy.copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
        return sqlite3_bind_blob(statement, index, copy, CInt(bytes.count), unmanaged)
    }
}

extension DatabaseValue: SQLiteRunnerValue {
    var copiedBytes: Int {
        switch storage {
        case .string(let text): SQLiteRunnerBinding.copied(text.utf8.count)
        case .blob(let data): SQLiteRunnerBinding.copied(data.count)
        default: 0
        }
    }

    func bind(to statement: SQLiteStatement, at index: CInt, buffer: UnsafeMutableRawBufferPointer, offset: inout Int) -> CInt {
        switch storage {
        case .string(var text):
            return text.withUTF8 { bytes in
                // SQLite's own answer for text past its length type.
                guard bytes.count <= Int(CInt.max) else { return SQLITE_TOOBIG }
                guard bytes.count <= SQLiteRunnerBinding.copyLimit, let base = buffer.baseAddress, offset + bytes.count <= buffer.count else {
                    // An empty buffer may have no address, which would bind NULL.
                    let source = bytes.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    return sqlite3_bind_text(statement, index, source.assumingMemoryBound(to: CChar.self), CInt(bytes.count), SQLiteRunnerBinding.transient)
                }
                let copy = base + offset
                // A zero-length copy still has an address (an empty text, not NULL).
                if let source = bytes.baseAddress, !bytes.isEmpty { copy.copyMemory(from: source, byteCount: bytes.count) }
                offset += bytes.count
                return sqlite3_bind_text(statement, index, copy.bindMemory(to: CChar.self, capacity: max(bytes.count, 1)), CInt(bytes.count), SQLiteRunnerBinding.unmanaged)
            }
        case .blob(let data) where !data.isEmpty && data.count <= SQLiteRunnerBinding.copyLimit:
            return data.withUnsafeBytes { SQLiteRunnerBinding.bindBlob($0, to: statement, at: index, buffer: buffer, offset: &offset) }
        default:
            // NULL, numbers, an empty blob (NULL, as GRDB binds it) and a
            // value past the copy limit (copied by SQLite).
            return self.bind(to: statement, at: index)
        }
    }
}

/// A value as the SQL layer encodes it (``SQLAttributeEncoder``), bound in
/// its SQLite form (``SQLValue/databaseValue``), except that a UUID's 16
/// bytes are bound from the run's buffer: no `Data` is made for them.
extension SQLValue: SQLiteRunnerValue {
    var copiedBytes: Int {
        switch self {
        case .uuid: MemoryLayout<uuid_t>.size
        case .text(let text): SQLiteRunnerBinding.copied(text.utf8.count)
        case .blob(let data): SQLiteRunnerBinding.copied(data.count)
        default: 0
        }
    }

    func bind(to statement: SQLiteStatement, at index: CInt, buffer: UnsafeMutableRawBufferPointer, offset: inout Int) -> CInt {
        switch self {
        case .uuid(let uuid):
            return withUnsafeBytes(of: uuid.uuid) { bytes in
                SQLiteRunnerBinding.bindBlob(bytes, to: statement, at: index, buffer: buffer, offset: &offset)
            }
        case .null:
            return sqlite3_bind_null(statement, index)
        case .integer(let value):
            return sqlite3_bind_int64(statement, index, value)
        default:
            return databaseValue.bind(to: statement, at: index, buffer: buffer, offset: &offset)
        }
    }
}
