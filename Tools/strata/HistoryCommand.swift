import ArgumentParser
import Foundation
import StrataText
import StrataWire

/// `strata history [--store S] [--after TOKEN] [--limit N] [--consumer NAME] [--json]`:
/// the persistent history of one store: the transactions every process
/// committed after a token.
struct HistoryCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print a store's persistent history: the saves every process committed after a token.",
        discussion: "An expired token (older than the last purge) fails with Strata code 134301: fetch again and continue from the store's current token."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Option(help: "The store, by configuration, entity or identifier (needed when the server has several).")
    var store: String = ""

    @Option(help: "Only transactions after this token (default: from the oldest kept).")
    var after: UInt64?

    @Option(help: "At most this many transactions (0: the server's default, 1000).")
    var limit: UInt32 = 0

    @Option(help: "Record that this consumer has merged everything up to --after, so purging keeps what follows.")
    var consumer: String = ""

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if !consumer.isEmpty, after == nil {
            throw ValidationError("--consumer needs --after: the token the consumer has merged up to")
        }
    }

    func execute(in session: Session) async throws {
        let history = try await session.client.history(store: store, afterToken: after, limit: limit, consumer: consumer)
        if json {
            Console.line(Self.json(history).rendered())
        } else {
            Console.output(Self.text(history, style: session.style))
        }
    }

    private static func date(_ micros: Int64) -> Date {
        Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    private static func kind(_ kind: Strata_V1_HistoryChange.Kind) -> String {
        switch kind {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        case .UNRECOGNIZED(let value): "kind \(value)"
        }
    }

    /// The history as JSON (camelCase keys, timestamps in ISO 8601).
    static func json(_ history: Strata_V1_HistoryResponse) -> JSONValue {
        .object([
            ("storeID", .string(history.storeID)),
            ("currentToken", .unsigned(history.currentToken)),
            ("transactions", .array(history.transactions.map { transaction in
                .object([
                    ("token", .unsigned(transaction.token)),
                    ("timestamp", .string(ISO8601.format(date(transaction.timestampMicros)))),
                    ("author", transaction.author.isEmpty ? .null : .string(transaction.author)),
                    ("context", transaction.contextName.isEmpty ? .null : .string(transaction.contextName)),
                    ("processID", .integer(Int64(transaction.processID))),
                    ("origin", .string(transaction.origin)),
                    ("changes", .array(transaction.changes.map { change in
                        var members: [(String, JSONValue)] = [
                            ("kind", .string(kind(change.kind))),
                            ("id", .string(change.id)),
                            ("entity", .string(change.entity)),
                            ("version", .integer(change.version)),
                            ("changedKeys", .array(change.changedKeys.map { .string($0) })),
                        ]
                        if !change.tombstone.isEmpty {
                            members.append(("tombstone", .object(change.tombstone.keys.sorted().compactMap { key in
                                change.tombstone[key].map { (key, ValueFormatter.json($0)) }
                            })))
                        }
                        return .object(members)
                    })),
                ])
            })),
        ])
    }

    /// The history for people: one line per transaction, one per change.
    static func text(_ history: Strata_V1_HistoryResponse, style: Style) -> String {
        var text = "\(style.bold("store")) \(history.storeID), current token \(history.currentToken)\n"
        if history.transactions.isEmpty { text += "(no transactions)\n" }
        for transaction in history.transactions {
            let who = [transaction.author, transaction.contextName].filter { !$0.isEmpty }.joined(separator: " / ")
            text += "\(style.bold("#\(transaction.token)")) \(ISO8601.format(date(transaction.timestampMicros))) pid \(transaction.processID)\(who.isEmpty ? "" : " \(who)") — \(transaction.changes.count) change(s)\n"
            for change in transaction.changes {
                var line = "  \(kind(change.kind)) \(change.id)"
                if change.kind != .delete { line += " v\(change.version)" }
                if !change.changedKeys.isEmpty { line += " [\(change.changedKeys.joined(separator: ", "))]" }
                if !change.tombstone.isEmpty {
                    line += " tombstone {" + change.tombstone.keys.sorted().compactMap { key in
                        change.tombstone[key].map { "\(key): \(ValueFormatter.text($0))" }
                    }.joined(separator: ", ") + "}"
                }
                text += line + "\n"
            }
        }
        return text
    }
}
