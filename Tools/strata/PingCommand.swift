import ArgumentParser
import StrataWire

/// `strata ping`: the round-trip time of one ping (after connecting).
struct PingCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Measure the round-trip time to the server."
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Flag(help: "Print JSON.")
    var json = false

    func execute(in session: Session) async throws {
        let hello = try await session.client.connect()
        let rtt = try await session.client.ping()
        let milliseconds = Double(rtt.components.seconds) * 1000 + Double(rtt.components.attoseconds) / 1e15
        let rounded = (milliseconds * 1000).rounded() / 1000
        if json {
            Console.line(JSONValue.object([
                ("roundTripMs", .double(rounded)),
                ("serverName", .string(hello.serverName)),
                ("serverID", .string(hello.serverID)),
                ("model", .string(hello.modelName)),
                ("protocol", .string("\(hello.version.major).\(hello.version.minor)")),
                ("serverVersion", .string(hello.serverVersion)),
            ]).rendered())
        } else {
            Console.line("pong from \(hello.serverName) (model \(hello.modelName)): \(formatMilliseconds(rounded)) ms")
        }
    }

    private func formatMilliseconds(_ value: Double) -> String {
        let micros = Int((value * 1000).rounded())
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
