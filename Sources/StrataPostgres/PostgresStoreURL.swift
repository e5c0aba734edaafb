import Foundation
import StrataModel

/// Where a PostgreSQL store lives and how to reach it, read from a URL:
///
///     postgresql://USER@HOST[:PORT]/DATABASE[?schema=NAME][&sslmode=MODE][&sslrootcert=FILE][&pool=N][&passfile=FILE]
///
/// - `schema`: the PostgreSQL schema holding the store's tables
///   (default `strata`); two stores on one database need two schemas.
/// - `sslmode`: `disable`, `require` (encrypted, server not verified) or
///   `verify-full` (encrypted, certificate and host name verified against
///   `sslrootcert` or the system's roots). The default is `disable` for a
///   loopback host and `verify-full` for any other.
/// - `pool`: the most connections the store keeps (1–1000, default 8).
/// - The password is never part of the URL (which lands in command lines,
///   logs and shell history): it comes from `passfile` (a file only its
///   owner can read, holding the password; one trailing newline ignored)
///   or the `PGPASSWORD` environment variable, in that order.
///
/// Any other part (a password, an unknown parameter, a second path
/// segment, a fragment) is refused with ``StrataError/Code/storeOpen``
/// naming it. ``description`` never contains the password.
public struct PostgresStoreURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted.
    public enum TLSMode: String, Sendable, Hashable {
        /// Not encrypted.
        case disable
        /// Encrypted; the server's certificate is not verified.
        case require
        /// Encrypted; the certificate chain and the host name are verified.
        case verifyFull = "verify-full"
    }

    /// The user connected as.
    public var user: String
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The database.
    public var database: String
    /// The schema holding the store's tables.
    public var schema: String
    /// How the connection is encrypted.
    public var tlsMode: TLSMode
    /// A file of PEM certificates to verify the server against (else the
    /// system's roots).
    public var rootCertificatePath: String?
    /// The most connections the store keeps open.
    public var poolSize: Int
    /// A file holding the password.
    public var passwordFile: String?

    /// The default schema.
    public static let defaultSchema = "strata"
    /// The default pool size.
    public static let defaultPoolSize = 8

    /// Reads `text`; throws 134080 naming what is wrong.
    public init(_ text: String) throws(StrataError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw Self.error("is not a URL")
        }
        guard scheme == "postgresql" || scheme == "postgres" else {
            throw Self.error("has scheme '\(scheme)'; a PostgreSQL store's URL starts with postgresql://")
        }
        if components.password != nil {
            throw Self.error("holds a password: give it in PGPASSWORD or a passfile, never in the URL")
        }
        if components.fragment != nil {
            throw Self.error("has a fragment (#…), which means nothing here")
        }
        guard let user = components.user, !user.isEmpty else {
            throw Self.error("names no user (postgresql://USER@HOST/DATABASE)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Self.error("names no host")
        }
        // Split before decoding: an encoded "/" belongs to the name.
        let segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count == 1, let database = segments.first.flatMap({ String($0).removingPercentEncoding }), !database.isEmpty else {
            throw Self.error(segments.isEmpty ? "names no database (postgresql://USER@HOST/DATABASE)" : "has a path of \(segments.count) segments; it names one database")
        }
        self.user = user
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw Self.error("has port \(port), outside 1–65535") }
        self.database = database
        schema = Self.defaultSchema
        tlsMode = Self.isLoopback(self.host) ? .disable : .verifyFull
        rootCertificatePath = nil
        poolSize = Self.defaultPoolSize
        passwordFile = nil
        var seen: Set<String> = []
        for item in components.queryItems ?? [] {
            guard seen.insert(item.name).inserted else { throw Self.error("gives '\(item.name)' twice") }
            guard let value = item.value, !value.isEmpty else { throw Self.error("gives '\(item.name)' no value") }
            switch item.name {
            case "schema":
                guard Self.isIdentifier(value) else {
                    throw Self.error("has schema '\(value)': a schema name here is 1–63 ASCII letters, digits and underscores, not starting with a digit")
                }
                schema = value
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Self.error("has sslmode '\(value)': use disable, require or verify-full")
                }
                tlsMode = mode
            case "sslrootcert":
                rootCertificatePath = value
            case "pool":
                guard let size = Int(value), (1...1000).contains(size) else {
                    throw Self.error("has pool '\(value)': a pool is 1–1000 connections")
                }
                poolSize = size
            case "passfile":
                passwordFile = value
            default:
                throw Self.error("has parameter '\(item.name)', which a PostgreSQL store does not read (schema, sslmode, sslrootcert, pool, passfile)")
            }
        }
        if rootCertificatePath != nil && tlsMode != .verifyFull {
            throw Self.error("gives sslrootcert without sslmode=verify-full, which alone verifies the server")
        }
    }

    /// The URL without any secret (there is none in it).
    public var description: String {
        var text = "postgresql://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)?schema=\(schema)&sslmode=\(tlsMode.rawValue)"
        if let rootCertificatePath { text += "&sslrootcert=\(rootCertificatePath)" }
        text += "&pool=\(poolSize)"
        if let passwordFile { text += "&passfile=\(passwordFile)" }
        return text
    }

    /// The store as messages name it: `schema@host:port/database` (no
    /// user, no file paths: messages may reach clients).
    public var displayName: String {
        "\(schema)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// The password: the passfile's content, else `PGPASSWORD` from
    /// `environment`, else none. Refuses a passfile that others than its
    /// owner may read or write (as libpq refuses such a `.pgpass`).
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) throws(StrataError) -> String? {
        if let passwordFile {
            // Checked and read through one descriptor: the file cannot be
            // swapped between the check and the read.
            let descriptor = open(passwordFile, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw StrataError(.storeOpen, "PostgreSQL password file \(passwordFile) cannot be read: \(String(cString: strerror(errno)))")
            }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw StrataError(.storeOpen, "PostgreSQL password file \(passwordFile) is not a regular file")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw StrataError(.storeOpen, "PostgreSQL password file \(passwordFile) can be read or written by others than its owner (mode \(String(info.st_mode & 0o777, radix: 8))); make it 0600")
            }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
            guard let data = try? handle.readToEnd(), var text = String(data: data, encoding: .utf8) else {
                throw StrataError(.storeOpen, "PostgreSQL password file \(passwordFile) cannot be read as UTF-8 text")
            }
            if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
            guard !text.isEmpty else {
                throw StrataError(.storeOpen, "PostgreSQL password file \(passwordFile) is empty")
            }
            return text
        }
        return environment["PGPASSWORD"]
    }

    /// Whether `host` is the loopback interface: `localhost`, an IPv4
    /// address in 127.0.0.0/8 or `::1`, read as addresses (a name such as
    /// `127.0.0.1.example.com` is not one).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }

    /// Whether `name` is a plain identifier PostgreSQL takes unquoted
    /// (letters, digits, underscores; at most 63 bytes).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    private static func error(_ problem: String) -> StrataError {
        StrataError(.storeOpen, "the PostgreSQL store URL \(problem)")
    }
}
