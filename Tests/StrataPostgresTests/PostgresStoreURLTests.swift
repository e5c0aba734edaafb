import Foundation
import StrataModel
import StrataStore
import Testing
@testable import StrataPostgres

@Suite struct PostgresStoreURLTests {
    @Test("A full URL: user, host, port, database and every parameter")
    func readsEveryPart() throws {
        let url = try PostgresStoreURL("postgresql://app@db.example.com:6543/books?schema=library&sslmode=verify-full&sslrootcert=/etc/ca.pem&pool=16&passfile=/run/secrets/pg")
        #expect(url.user == "app")
        #expect(url.host == "db.example.com")
        #expect(url.port == 6543)
        #expect(url.database == "books")
        #expect(url.schema == "library")
        #expect(url.tlsMode == .verifyFull)
        #expect(url.rootCertificatePath == "/etc/ca.pem")
        #expect(url.poolSize == 16)
        #expect(url.passwordFile == "/run/secrets/pg")
        #expect(url.description == "postgresql://app@db.example.com:6543/books?schema=library&sslmode=verify-full&sslrootcert=/etc/ca.pem&pool=16&passfile=/run/secrets/pg")
    }

    @Test("Messages name the store without its user or any file path (messages reach clients)")
    func displayNames() throws {
        let text = "postgresql://app@db.internal:6543/prod?schema=books&sslmode=verify-full&sslrootcert=/etc/strata/ca.pem&passfile=/etc/strata/pgpass&pool=4"
        let location = try PostgresStoreURL(text)
        #expect(location.displayName == "books@db.internal:6543/prod")
        let description = StoreDescription(url: URL(string: text), type: .postgres)
        #expect(description.displayName == "postgresql://db.internal:6543/prod?schema=books")
        for name in [location.displayName, description.displayName] {
            #expect(!name.contains("/etc") && !name.contains("app@"), "\(name)")
        }
    }

    @Test("Defaults: port 5432, schema strata, pool 8; no TLS on loopback, verified TLS elsewhere")
    func defaults() throws {
        let local = try PostgresStoreURL("postgres://me@127.0.0.1/db")
        #expect(local.port == 5432)
        #expect(local.schema == "strata")
        #expect(local.poolSize == 8)
        #expect(local.tlsMode == .disable)
        #expect(try PostgresStoreURL("postgresql://me@localhost/db").tlsMode == .disable)
        #expect(try PostgresStoreURL("postgresql://me@[::1]:5433/db").host == "::1")
        #expect(try PostgresStoreURL("postgresql://me@[::1]:5433/db").tlsMode == .disable)
        #expect(try PostgresStoreURL("postgresql://me@db.internal/db").tlsMode == .verifyFull)
        // Names that look like loopback addresses are not loopback.
        #expect(try PostgresStoreURL("postgresql://me@127.0.0.1.example.com/db").tlsMode == .verifyFull)
        #expect(try PostgresStoreURL("postgresql://me@127.5.6.7/db").tlsMode == .disable)
        #expect(try PostgresStoreURL("postgresql://me@[::2]/db").tlsMode == .verifyFull)
        // An encoded "/" is part of the database's name.
        #expect(try PostgresStoreURL("postgresql://me@host/a%2Fb").database == "a/b")
        #expect(try PostgresStoreURL("postgresql://me@db.internal/db?sslmode=require").tlsMode == .require)
    }

    @Test("Refused, naming what is wrong, never echoing a password", arguments: [
        ("postgresql://me:hunter2@host/db", "holds a password"),
        ("mysql://me@host/db", "scheme 'mysql'"),
        ("postgresql://host/db", "names no user"),
        ("postgresql://me@host", "names no database"),
        ("postgresql://me@host/db/extra", "2 segments"),
        ("postgresql://me@host/db?schema=bad-name", "schema 'bad-name'"),
        ("postgresql://me@host/db?schema=1abc", "schema '1abc'"),
        ("postgresql://me@host/db?sslmode=prefer", "sslmode 'prefer'"),
        ("postgresql://me@host/db?pool=0", "pool '0'"),
        ("postgresql://me@host/db?pool=many", "pool 'many'"),
        ("postgresql://me@host/db?readonly", "gives 'readonly' no value"),
        ("postgresql://me@host/db?application_name=x", "parameter 'application_name'"),
        ("postgresql://me@host/db?pool=2&pool=3", "gives 'pool' twice"),
        ("postgresql://me@host/db?sslrootcert=/ca.pem&sslmode=require", "sslrootcert without sslmode=verify-full"),
        ("postgresql://me@host/db#x", "fragment"),
        ("postgresql://me@host:99999/db", "port 99999"),
        ("not a url at all", "is not a URL"),
    ])
    func refusals(_ text: String, _ problem: String) {
        do {
            let url = try PostgresStoreURL(text)
            Issue.record("accepted \(text) as \(url)")
        } catch {
            #expect(error.code == .storeOpen)
            #expect(error.message.contains(problem), "\(error.message)")
            #expect(!error.message.contains("hunter2"))
        }
    }

    @Test("The password: the passfile (owner-only, one newline dropped), else PGPASSWORD, else none")
    func password() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pg-url-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("password").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(chmod(file, 0o600) == 0)
        let withFile = try PostgresStoreURL("postgresql://me@127.0.0.1/db?passfile=\(file)")
        #expect(try withFile.password(environment: ["PGPASSWORD": "other"]) == "s3cret")
        let plain = try PostgresStoreURL("postgresql://me@127.0.0.1/db")
        #expect(try plain.password(environment: ["PGPASSWORD": "from-env"]) == "from-env")
        #expect(try plain.password(environment: [:]) == nil)
        // A file others may read is refused, as libpq refuses such a .pgpass.
        #expect(chmod(file, 0o644) == 0)
        #expect(throws: StrataError.self) { try withFile.password(environment: [:]) }
        let missing = try PostgresStoreURL("postgresql://me@127.0.0.1/db?passfile=\(directory.path)/none")
        #expect(throws: StrataError.self) { try missing.password(environment: [:]) }
        // A folder, or an empty file, is no password.
        let folder = try PostgresStoreURL("postgresql://me@127.0.0.1/db?passfile=\(directory.path)")
        #expect(throws: StrataError.self) { try folder.password(environment: [:]) }
        try Data().write(to: URL(fileURLWithPath: file))
        #expect(chmod(file, 0o600) == 0)
        #expect(throws: StrataError.self) { try withFile.password(environment: [:]) }
    }
}
