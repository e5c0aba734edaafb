import ArgumentParser
import Foundation
import StrataWire

/// `strata shell`: an interactive prompt taking the same commands over one
/// connection, plus `begin` … `save` / `rollback` to group changes into one
/// change set. On a terminal it edits lines and keeps history in
/// `~/.strata_history`; otherwise it reads standard input line by line, so
/// scripts can pipe commands in.
///
/// A failing command does not end the shell. Reading from a pipe or file,
/// the shell's exit status is that of the last command that failed (0 when
/// none did), and 1 if input ends with changes neither saved nor rolled
/// back (they are dropped); on a terminal it is 0.
struct ShellCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive prompt for the same commands, plus begin … save / rollback.",
        discussion: """
            Shell-only commands: begin (start gathering changes), save [--json] (send them as one \
            change set), rollback (drop them), help, quit. Inside begin … save, insert prints a \
            temporary ID (new-1, …) that later commands of the same change set may use.
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    func execute(in session: Session) async throws {
        let terminal = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        var source: any LineSource = terminal
            ? LineEditor(historyFile: LineEditor.defaultHistoryFile)
            : PlainLineReader(showsPrompt: isatty(STDIN_FILENO) == 1)
        if terminal {
            let endpoint = "\(session.client.configuration.host):\(session.client.configuration.port)"
            Console.line(session.style.dim("strata shell on \(endpoint): 'help' lists the commands, Ctrl-D or 'quit' ends."))
        }
        var status = ExitStatus.success.rawValue
        while let line = source.readLine(prompt: prompt(session)) {
            let words: [String]
            do {
                words = try ShellWords.split(line)
            } catch {
                status = ErrorReporter.report(error)
                continue
            }
            guard let first = words.first else { continue }
            if ["quit", "exit", "\\q"].contains(first) { break }
            let result = await run(words, in: session)
            if result != ExitStatus.success.rawValue { status = result }
        }
        if let transaction = session.transaction, !transaction.isEmpty {
            Console.error("error: input ended inside begin … save: \(transaction.count) unsaved change\(transaction.count == 1 ? "" : "s") dropped")
            session.transaction = nil
            status = ExitStatus.invalidInput.rawValue
        }
        if status != ExitStatus.success.rawValue, isatty(STDIN_FILENO) != 1 { throw ExitCode(status) }
    }

    private func prompt(_ session: Session) -> String {
        let text = session.transaction == nil ? "strata> " : "strata*> "
        return session.style.bold(text)
    }

    /// Runs one line's words; returns its exit status.
    private func run(_ words: [String], in session: Session) async -> Int32 {
        do {
            switch words[0] {
            case "help", "?":
                Console.output(Self.help)
            case "begin":
                guard words.count == 1 else { throw CLIError.usage("begin takes no arguments") }
                guard session.transaction == nil else { throw CLIError.usage("already inside begin … save") }
                session.transaction = ChangeSet()
            case "rollback":
                guard words.count == 1 else { throw CLIError.usage("rollback takes no arguments") }
                guard let transaction = session.transaction else { throw CLIError.usage("rollback without begin") }
                session.transaction = nil
                Console.error("rolled back \(transaction.count) change\(transaction.count == 1 ? "" : "s")")
            case "save":
                try await save(words, in: session)
            case "shell":
                throw CLIError.usage("already in the shell")
            default:
                let command = try StrataCommand.parse(words)
                if let client = command as? any ClientCommand {
                    try await client.execute(in: session)
                } else if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    var command = command
                    try command.run()
                }
            }
            return ExitStatus.success.rawValue
        } catch {
            return ErrorReporter.report(error)
        }
    }

    /// `save [--json]`: sends the gathered changes as one save request.
    private func save(_ words: [String], in session: Session) async throws {
        let json = words.dropFirst() == ["--json"]
        guard words.count == 1 || json else { throw CLIError.usage("usage: save [--json]") }
        guard let transaction = session.transaction else { throw CLIError.usage("save without begin") }
        // The change set stays open if the save fails, so it can be fixed or rolled back.
        let response = try await session.client.save(transaction.request)
        session.transaction = nil
        if json {
            Console.line(JSONValue.object([
                ("inserted", .object(response.inserted.map { ($0.temporaryID, .string($0.id)) })),
                ("versions", .object(response.versions.sorted { $0.key < $1.key }.map { ($0.key, .integer($0.value)) })),
                ("updated", .array(response.updated.map { .string($0) })),
                ("deleted", .array(response.deleted.map { .string($0) })),
            ]).rendered())
            return
        }
        for inserted in response.inserted { Console.line("inserted \(inserted.temporaryID) \(inserted.id)") }
        for id in response.updated { Console.line("updated \(id)" + (response.versions[id].map { " \($0)" } ?? "")) }
        for id in response.deleted { Console.line("deleted \(id)") }
    }

    private static let help = """
        Commands (each takes --help):
          ping                                  round-trip time
          model [--json]                        the served model
          fetch ENTITY [--where P] [--sort K,-K] [--limit N] [--offset N] [--include NAME,…] [--json]
          count ENTITY [--where P]              the number of matching objects
          insert ENTITY key=value … [--json]    insert; prints the new ID
          update ID key=value … [--if-version N] [--json]
          delete ID …
          refresh ID [--json]                   current values and fetched properties
          watch [ENTITY] [--where P] [--count N] [--json]
          stats [--json]                        server figures
          model inspect|validate PATH           read model files
        Change sets:
          begin                                 gather the following insert/update/delete
          save [--json]                         send them as one change set
          rollback                              drop them
        help, quit (or Ctrl-D)

        """
}
