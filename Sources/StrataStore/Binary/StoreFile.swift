#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataModel

/// Reading a store file whole, and replacing it atomically.
///
/// A save writes the new bytes to `<path>.tmp` in the same directory,
/// `fsync`s it, `rename`s it over the store file and `fsync`s the
/// directory. `rename` is atomic, so after a crash the path holds the old
/// file or the new one, never a torn one; a failure before the rename
/// removes the temporary file and leaves the old file untouched.
package enum StoreFile {
    /// The steps of an atomic write, for fault injection in tests.
    enum Stage: Sendable, Hashable {
        /// The temporary file is about to be created.
        case beforeWrite
        /// The temporary file is written and synced, not yet renamed.
        case beforeRename
    }

    /// A hook called at each ``Stage``; throwing makes the write fail there.
    typealias FaultHook = @Sendable (Stage) throws -> Void

    /// The file's bytes, or nil when it does not exist.
    static func load(_ path: String, displayName: String) throws(StrataError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw StrataError(.storeOpen, "\(displayName): cannot open: \(PosixError.describe(code))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StrataError(.storeOpen, "\(displayName): cannot stat: \(PosixError.describe(errno))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw StrataError(.storeOpen, "\(displayName): not a regular file")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw StrataError(.storeOpen, "\(displayName): cannot read: \(PosixError.describe(errno))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }

    /// Replaces the file at `path` with `bytes`, atomically and durably.
    /// Fails with 134030 (the old file untouched) when any step before the
    /// rename fails. Once the rename is done the new file is the store, so
    /// nothing after it can fail the write: syncing the directory is a best
    /// effort (if it fails, only a power loss could bring the old file back,
    /// whole).
    static func writeAtomically(_ bytes: [UInt8], to path: String, displayName: String, fault: FaultHook? = nil) throws(StrataError) {
        let temporary = path + ".tmp"
        func failure(_ step: String, _ code: Int32) -> StrataError {
            StrataError(.storeSave, "\(displayName): cannot \(step) \(temporary): \(PosixError.describe(code)); the store file is unchanged")
        }
        do {
            try fault?(.beforeWrite)
        } catch {
            throw StrataError(.storeSave, "\(displayName): write failed before it began: \(error); the store file is unchanged")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("create", errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                close(fd)
                unlink(temporary)
                throw failure("write", code)
            }
            written += n
        }
        if fsync(fd) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            throw failure("sync", code)
        }
        if close(fd) != 0 {
            let code = errno
            unlink(temporary)
            throw failure("close", code)
        }
        do {
            try fault?(.beforeRename)
        } catch {
            unlink(temporary)
            throw StrataError(.storeSave, "\(displayName): write failed before the rename: \(error); the store file is unchanged")
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw StrataError(.storeSave, "\(displayName): cannot rename \(temporary) over the store file: \(PosixError.describe(code)); the store file is unchanged")
        }
        syncDirectory(of: path)
    }

    package static func syncDirectory(of path: String) {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
