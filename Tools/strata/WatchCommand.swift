import ArgumentParser
import Foundation
import StrataText
import StrataWire

/// `strata watch [ENTITY] [--where P] [--count N] [--json]`: one line per
/// change notification, written as soon as it arrives, until interrupted
/// or N notifications. Once subscribed it says so on stderr. When the
/// server cannot be reached any more it ends with exit status 2.
struct WatchCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print one line per change notification (one JSON object per line with --json)."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Argument(help: "The entity to watch (default: every entity).", completion: EntityCompletion.kind)
    var entity: String?

    @Option(name: .customLong("where"), help: ArgumentHelp("Report inserts and updates only of objects matching this predicate.", valueName: "predicate"))
    var predicate: String?

    @Option(help: "Stop after this many notifications.")
    var count: Int?

    @Flag(help: "Print one JSON object per line.")
    var json = false

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        if predicate != nil, entity == nil { throw ValidationError("--where needs an entity to watch") }
    }

    func execute(in session: Session) async throws {
        if let entity { _ = try await session.model().entity(entity) }
        let notifications = try await session.client.subscribe(entity: entity ?? "", predicate: predicate ?? "")
        var scope = entity ?? "every entity"
        if let predicate { scope += " where \(predicate)" }
        Console.error("watching \(scope)" + (count.map { " for \($0) notification\($0 == 1 ? "" : "s")" } ?? " (Ctrl-C to stop)"))
        let client = session.client, style = session.style, json = json, count = count
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var seen = 0
                for await notification in notifications {
                    Console.line(json ? Self.json(notification).rendered(pretty: false) : Self.text(notification, style: style))
                    seen += 1
                    if let count, seen >= count { return }
                }
            }
            // The client renews subscriptions on a new connection by itself;
            // a server that stays unreachable ends the watch (exit 2).
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.livenessInterval)
                    _ = try await client.ping()
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// How often watch checks that the server is still there.
    static let livenessInterval = Duration.seconds(2)

    /// `{"time", "origin", "inserted": [{"id","entity","version"}], "updated": [… "changedKeys"], "deleted": [{"id","entity"}]}`.
    static func json(_ notification: Strata_V1_ChangeNotification) -> JSONValue {
        func object(_ changed: Strata_V1_ChangedObject, keys: Bool, version: Bool) -> JSONValue {
            var members: [(String, JSONValue)] = [("id", .string(changed.id)), ("entity", .string(changed.entity))]
            if version { members.append(("version", .integer(changed.version))) }
            if keys { members.append(("changedKeys", .array(changed.changedKeys.map { .string($0) }))) }
            return .object(members)
        }
        return .object([
            ("time", .string(ISO8601.format(Date()))),
            ("origin", .string(notification.origin)),
            ("inserted", .array(notification.inserted.map { object($0, keys: false, version: true) })),
            ("updated", .array(notification.updated.map { object($0, keys: true, version: true) })),
            ("deleted", .array(notification.deleted.map { object($0, keys: false, version: false) })),
        ])
    }

    /// `12:30:01.250Z  by origin: inserted ID (v1); updated ID (v3: price, title); deleted ID`.
    static func text(_ notification: Strata_V1_ChangeNotification, style: Style) -> String {
        var parts: [String] = []
        for object in notification.inserted { parts.append(style.green("inserted") + " \(object.id) (v\(object.version))") }
        for object in notification.updated {
            let keys = object.changedKeys.isEmpty ? "" : ": " + object.changedKeys.joined(separator: ", ")
            parts.append(style.yellow("updated") + " \(object.id) (v\(object.version)\(keys))")
        }
        for object in notification.deleted { parts.append(style.red("deleted") + " \(object.id)") }
        let time = ISO8601.format(Date()).split(separator: "T").last.map(String.init) ?? ""
        return style.dim(time) + "  by \(notification.origin): " + parts.joined(separator: "; ")
    }
}
