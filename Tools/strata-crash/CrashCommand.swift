import ArgumentParser
import Foundation

/// The two halves of `Tools/crash-test.sh`: writers that log what the
/// server acknowledged, and the check of a store against those logs.
@main
struct CrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-crash",
        abstract: "Writes acknowledged saves to a strata-server and checks none was lost (for Tools/crash-test.sh).",
        subcommands: [WriteCommand.self, CheckCommand.self]
    )
}
