#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open file descriptors, which bounds the
/// connections a server can hold: each is a descriptor, and so are the
/// stores' files, the listening socket and the event loops' own.
enum FileDescriptorLimit {
    /// Descriptors kept back from connections: stores (database, WAL,
    /// shared memory, lock files, a few readers each), the listener, the
    /// event loops, logs, and the one a refused connection needs for its
    /// answer.
    static let reserved = 128

    /// Raises the soft limit as far as the hard limit allows (at most
    /// 1,048,576) and returns the soft limit in force, or nil when it
    /// cannot be read.
    static func raise() -> Int? {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return nil }
        let wanted = min(limit.rlim_max, 1_048_576)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resourceNoFile, &raised) == 0 { return Int(wanted) }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// The connections a process with `limit` descriptors can hold.
    static func connections(forLimit limit: Int) -> Int {
        max(1, limit - reserved)
    }

    #if canImport(Glibc)
    private static let resourceNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNoFile = RLIMIT_NOFILE
    #endif
}
