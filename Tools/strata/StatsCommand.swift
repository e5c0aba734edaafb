import ArgumentParser
import StrataWire

/// `strata stats [--json]`: the server's figures: connections, requests
/// and latencies per operation, store sizes.
struct StatsCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the server's figures: connections, requests per operation, latencies, store sizes."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func execute(in session: Session) async throws {
        let stats = try await session.client.stats()
        if json {
            Console.line(Self.json(stats).rendered())
        } else {
            Console.output(Self.text(stats, style: session.style))
        }
    }

    /// The figures as JSON (camelCase keys, latencies in milliseconds).
    static func json(_ stats: Strata_V1_StatsResponse) -> JSONValue {
        .object([
            ("serverID", .string(stats.serverID)),
            ("serverVersion", .string(stats.serverVersion)),
            ("uptimeSeconds", .double(stats.uptimeSeconds)),
            ("connectionsOpen", .unsigned(UInt64(stats.connectionsOpen))),
            ("connectionsTotal", .unsigned(stats.connectionsTotal)),
            ("subscriptions", .unsigned(UInt64(stats.subscriptions))),
            ("operations", .array(stats.operations.map { operation in
                .object([
                    ("operation", .string(operation.operation)),
                    ("requests", .unsigned(operation.requests)),
                    ("errors", .unsigned(operation.errors)),
                    ("latencyP50Ms", .double(operation.latencyP50Ms)),
                    ("latencyP90Ms", .double(operation.latencyP90Ms)),
                    ("latencyP99Ms", .double(operation.latencyP99Ms)),
                    ("latencyMaxMs", .double(operation.latencyMaxMs)),
                ])
            })),
            ("stores", .array(stats.stores.map { store in
                .object([
                    ("storeID", .string(store.storeID)),
                    ("configuration", .string(store.configuration)),
                    ("type", .string(store.type)),
                    ("path", store.path.isEmpty ? .null : .string(store.path)),
                    ("sizeBytes", .unsigned(store.sizeBytes)),
                    ("readOnly", .bool(store.readOnly)),
                ])
            })),
            ("warnings", .array(stats.warnings.map { .string($0) })),
        ])
    }

    /// The figures for people: a summary and two tables.
    static func text(_ stats: Strata_V1_StatsResponse, style: Style) -> String {
        var text = "\(style.bold("server")) \(stats.serverID)\(stats.serverVersion.isEmpty ? "" : " (strata \(stats.serverVersion))"), up \(duration(stats.uptimeSeconds))\n"
        for warning in stats.warnings { text += "\(style.bold("warning")): \(warning)\n" }
        text += "\(style.bold("connections")) \(stats.connectionsOpen) open, \(stats.connectionsTotal) since start; "
            + "\(style.bold("subscriptions")) \(stats.subscriptions)\n\n"
        var operations = TableRenderer(columns: [
            .init(title: "operation"), .init(title: "requests", rightAligned: true), .init(title: "errors", rightAligned: true),
            .init(title: "p50 ms", rightAligned: true), .init(title: "p90 ms", rightAligned: true),
            .init(title: "p99 ms", rightAligned: true), .init(title: "max ms", rightAligned: true),
        ], style: style)
        for operation in stats.operations {
            operations.rows.append([
                operation.operation, String(operation.requests), String(operation.errors),
                milliseconds(operation.latencyP50Ms), milliseconds(operation.latencyP90Ms),
                milliseconds(operation.latencyP99Ms), milliseconds(operation.latencyMaxMs),
            ])
        }
        text += operations.render() + "\n"
        var stores = TableRenderer(columns: [
            .init(title: "configuration"), .init(title: "type"), .init(title: "size", rightAligned: true),
            .init(title: "access"), .init(title: "path"),
        ], style: style)
        for store in stats.stores {
            stores.rows.append([
                store.configuration.isEmpty ? "(default)" : store.configuration, store.type, bytes(store.sizeBytes),
                store.readOnly ? "read-only" : "read-write", store.path.isEmpty ? "(memory)" : store.path,
            ])
        }
        return text + stores.render()
    }

    private static func milliseconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = String(hundredths % 100)
        return "\(hundredths / 100)." + (fraction.count < 2 ? "0" : "") + fraction
    }

    private static func duration(_ seconds: Double) -> String {
        let total = Int(seconds)
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total / 60 % 60) min"
    }

    private static func bytes(_ count: UInt64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
