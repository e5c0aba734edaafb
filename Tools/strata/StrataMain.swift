import ArgumentParser
import Foundation

/// The process entry point: splits off the connection options placed
/// before the command, parses the rest, runs the command and maps every
/// failure to its exit status (see ``ExitStatus``).
@main
enum StrataMain {
    static func main() async {
        let status = await run(Array(CommandLine.arguments.dropFirst()))
        exit(status)
    }

    /// Runs one command line; returns the exit status.
    static func run(_ arguments: [String]) async -> Int32 {
        do {
            let (leading, rest) = try ConnectionSettings.extractLeading(arguments)
            var command = try StrataCommand.parse(rest)
            if let client = command as? any ClientCommand {
                let session = Session(configuration: try client.connection.settings.configuration(over: leading))
                do {
                    try await client.execute(in: session)
                } catch {
                    await session.close()
                    throw error
                }
                await session.close()
            } else if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitStatus.success.rawValue
        } catch {
            return ErrorReporter.report(error)
        }
    }
}
