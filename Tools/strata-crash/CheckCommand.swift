import ArgumentParser
import Foundation
import GRDB
import StrataClient
import StrataWire

/// Reads every Book through a fresh server and compares with the writers'
/// logs: every acknowledged save present, no title twice, every save all
/// there or not at all; for SQLite stores, `PRAGMA integrity_check` on the
/// files (read-only, after the server stopped, with `--sqlite`).
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check", abstract: "Check a store against the acknowledged saves.")

    @Option(help: "The port of a server on the store, on 127.0.0.1.")
    var port: Int?

    @Option(help: "The log the writers appended to.")
    var log: String

    @Option(help: "SQLite store files to run PRAGMA integrity_check on (repeatable); needs no server.")
    var sqlite: [String] = []

    @Option(help: "Rounds run, for the summary line.")
    var rounds = 0

    func run() async throws {
        if let port {
            try await checkObjects(port: port)
        }
        for path in sqlite {
            let result = try integrity(path)
            print("integrity \(path.split(separator: "/").last ?? ""): \(result)")
            if result != "ok" { throw ExitCode(1) }
        }
    }

    private func checkObjects(port: Int) async throws {
        var acknowledged: [String: Int] = [:]
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let count = Int(parts[1]) else { continue }
            acknowledged[String(parts[0])] = count
        }
        let client = StrataClient(configuration: ClientConfiguration(host: "127.0.0.1", port: port, clientName: "crash-check", connectTimeout: .seconds(5)))
        defer { Task { await client.close() } }
        var titles: [String: Int] = [:]
        var batches: [String: (found: Int, size: Int)] = [:]
        var fetch = Strata_V1_FetchRequest()
        fetch.entity = "Book"
        fetch.batchSize = 2000
        for try await batch in try await client.fetchBatches(fetch) {
            for object in batch.objects {
                guard case .string(let title)? = object.values["title"]?.kind,
                      case .string(let author)? = object.values["author"]?.kind,
                      case .integer(let size)? = object.values["pages"]?.kind else { continue }
                titles[title, default: 0] += 1
                batches[author, default: (0, Int(size))].found += 1
            }
        }
        let acknowledgedObjects = acknowledged.values.reduce(0, +)
        var lost = 0
        for (batch, count) in acknowledged {
            lost += max(0, count - (batches[batch]?.found ?? 0))
        }
        let duplicated = titles.values.filter { $0 > 1 }.reduce(0) { $0 + $1 - 1 }
        let partial = batches.values.filter { $0.found != $0.size }.count
        print("rounds \(rounds), acknowledged \(acknowledgedObjects) objects in \(acknowledged.count) saves, present \(titles.count), lost \(lost), duplicated \(duplicated), partial \(partial)")
        await client.close()
        if lost > 0 || duplicated > 0 || partial > 0 { throw ExitCode(1) }
    }

    private func integrity(_ path: String) throws -> String {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? database.close() }
        return try database.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
        }
    }
}
