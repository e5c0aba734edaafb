#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataModel

/// An `flock` on a store's lock file (`<store path>.lock`), held from open
/// to close so that one store file has one writer.
///
/// A writable store takes an exclusive lock, a read-only one a shared lock:
/// read-only opens can coexist, but never with a writer. `flock` locks
/// belong to the open file description, so a second open in the same
/// process is refused just like one in another process. The lock goes away
/// with the descriptor: at ``release()``, at deinit, or when the process
/// dies.
package final class StoreFileLock {
    /// The lock file's path.
    let path: String
    private var descriptor: Int32

    /// Takes the lock without waiting. Fails with 134080 when another open
    /// store holds it, or when the lock file cannot be created (a read-only
    /// store in a directory it cannot write goes on without a lock).
    package init(storePath: String, exclusive: Bool, displayName: String) throws(StrataError) {
        path = storePath + ".lock"
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0, !exclusive {
            fd = open(path, O_RDONLY | O_CLOEXEC)
        }
        guard fd >= 0 else {
            let code = errno
            if !exclusive, code == EACCES || code == EROFS || code == ENOENT {
                descriptor = -1
                return
            }
            throw StrataError(.storeOpen, "\(displayName): cannot open lock file \(path): \(PosixError.describe(code))")
        }
        while flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK {
                throw StrataError(.storeOpen, "\(displayName): the store is open in another process (or already open in this one): \(path) is locked")
            }
            throw StrataError(.storeOpen, "\(displayName): cannot lock \(path): \(PosixError.describe(code))")
        }
        descriptor = fd
    }

    /// Whether the lock is held.
    var isHeld: Bool { descriptor >= 0 }

    /// Releases the lock (idempotent).
    package func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
