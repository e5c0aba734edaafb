import ArgumentParser
import Foundation
import StrataWire

/// `strata shell`: an interactive prompt taking the same commands over one
/// connection, plus `begin` … `save` / `rollback` to group changes into one
/// change set. On a terminal it edits lines with libedit (history in
/// `~/.strata_history` or `$STRATA_HISTFILE`, Ctrl-R search, Tab
/// completion of commands, entities and properties); otherwise it reads
/// standard input, or `-f FILE`, line by line, so scripts can pipe
/// commands in.
///
/// A failing command does not end the shell unless `--stop-on-error`
/// (psql's `ON_ERROR_STOP`); from a pipe or file every error names its
/// input line. Reading from a pipe or file, the shell's exit status is that
/// of the last command that failed (0 when none did), and 1 if input ends
/// with changes neither saved nor rolled back (they are dropped); on a
/// terminal it is 0.
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

    @Option(name: .customShort("f"), help: ArgumentHelp("Read the commands from this file instead of standard input.", valueName: "file"))
    var file: String?

    @Flag(help: "Stop at the first command that fails, with its exit status (psql's ON_ERROR_STOP).")
    var stopOnError = false

    func execute(in session: Session) async throws {
        let terminal = file == nil && isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        var source: any LineSource
        if let file {
            guard let handle = FileHandle(forReadingAtPath: file) else { throw CLIError.usage("-f: cannot read \(file)") }
            source = PlainLineReader(showsPrompt: false, input: handle)
        } else if terminal {
            source = EditLineReader(historyFile: EditLineReader.defaultHistoryFile)
            if let model = try? await session.model() {
                ShellCompletion.words.withLock { $0 = ShellCompletion.words(commands: Self.commandNames, model: model) }
            }
        } else {
            source = PlainLineReader(showsPrompt: isatty(STDIN_FILENO) == 1)
        }
        if terminal {
            let endpoint = "\(session.client.configuration.host):\(session.client.configuration.port)"
            Console.line(session.style.dim("strata shell on \(endpoint): 'help' lists the commands, Tab completes, Ctrl-R searches the history, Ctrl-D or 'quit' ends."))
        }
        var status = ExitStatus.success.rawValue
        var number = 0
        // Errors from a script name its line: "line 3: error: …".
        let place: (Int) -> String? = { terminal ? nil : "\(file ?? "line")\(file == nil ? " " : ":")\($0)" }
        while let line = source.readLine(prompt: terminal ? prompt(session) : "") {
            number += 1
            let words: [String]
            do {
                words = try ShellWords.split(line)
            } catch {
                status = ErrorReporter.report(error, at: place(number))
                if stopOnError { break }
                continue
            }
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if ["quit", "exit", "\\q"].contains(first) { break }
            let result = await run(words, in: session, at: place(number))
            if result != ExitStatus.success.rawValue {
                status = result
                if stopOnError { break }
            }
        }
        if let transaction = session.transaction, !transaction.isEmpty {
            Console.error("error: input ended inside begin … save: \(transaction.count) unsaved change\(transaction.count == 1 ? "" : "s") dropped")
            session.transaction = nil
            // A failure that ended the script keeps its own status.
            if status == ExitStatus.success.rawValue { status = ExitStatus.invalidInput.rawValue }
        }
        if status != ExitStatus.success.rawValue, !terminal || stopOnError { throw ExitCode(status) }
    }

    /// The first words Tab completes.
    static let commandNames = StrataCommand.configuration.subcommands.map { $0._commandName }.filter { $0 != "shell" }
        + ["begin", "save", "rollback", "history", "help", "quit"]

    /// The prompt (plain: libedit measures it by its characters).
    private func prompt(_ session: Session) -> String {
        session.transaction == nil ? "strata> " : "strata*> "
    }

    /// Runs one line's words; returns its exit status.
    private func run(_ words: [String], in session: Session, at place: String?) async -> Int32 {
        do {
            switch words[0] {
            case "help", "?":
                Console.output(Self.help)
            case "history":
                guard words.count == 1 else { throw CLIError.usage("history takes no arguments") }
                for (index, line) in EditLineReader.history().enumerated() { Console.line("\(String(index + 1).leftPadded(5))  \(line)") }
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
            return ErrorReporter.report(error, at: place)
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
          fetch ENTITY [--where P] [--sort K,-K] [--limit N] [--offset N] [--include NAME,…] [--format F]
          count ENTITY [--where P]              the number of matching objects
          insert ENTITY key=value … [--json]    insert; prints the new ID
          update ID key=value … [--if-version N] [--json]
          delete ID …
          refresh ID [--json]                   current values and fetched properties
          watch [ENTITY] [--where P] [--count N] [--json]
          stats [--json]                        server figures
          model inspect|validate PATH           read model files
          export ENTITY [--format ndjson|csv]   every object, streamed
          import ENTITY FILE [--batch N]        insert the objects of an ndjson or CSV file
          backup [--store S] FILE               a consistent copy of a store
        Change sets:
          begin                                 gather the following insert/update/delete
          save [--json]                         send them as one change set
          rollback                              drop them
        history                                 the lines entered (Ctrl-R searches them, Up/Down recall)
        help, quit (or Ctrl-D); Tab completes commands, entities and properties

        """
}

extension String {
    /// The string right-aligned in `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
