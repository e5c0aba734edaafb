import ArgumentParser
import Foundation
import StrataModel
import StrataStore
import StrataSQLite
import StrataWire

/// `strata-server restore BACKUP --to STORE_FILE`: puts a backup made by
/// `strata backup` in a store file's place, with the server stopped.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a backup (strata backup) in a store file's place; stop the server first.",
        discussion: """
            Checks the backup (SQLite integrity and Strata metadata, or a binary store's header and \
            checksums) and that it is a backup of the same store, refuses a store file that any \
            process has open, keeps the store's current files as STORE_FILE.replaced-TIMESTAMP-… \
            (with their -wal and -shm), and copies the backup in. Object IDs handed out after the \
            backup are not handed out again; history consumers fetch again. Start the server as \
            before: it opens the restored store.
            """,
        version: StrataVersion.description
    )

    @Argument(help: "The backup file.")
    var backup: String

    @Option(help: ArgumentHelp("The store file to replace (e.g. strata-data/Books.sqlite).", valueName: "file"))
    var to: String

    @Flag(help: "Restore even when the backup is of another store than the file it replaces (another identifier).")
    var force = false

    func run() throws {
        umask(0o077)
        do {
            let existed = FileManager.default.fileExists(atPath: to)
            let outcome = try StoreRestore.restore(from: URL(fileURLWithPath: backup), to: URL(fileURLWithPath: to), replacingAnotherStore: force)
            print("restored \(to) from \(backup) (\(outcome.format.rawValue) store)")
            if !existed { print("there was no store file at \(to): the backup is now the store there (check the path if you meant to replace one)") }
            for file in outcome.keptFiles { print("kept the previous file as \(file)") }
            if outcome.historyToken > 0 {
                print("history starts again after token \(outcome.historyToken): consumers with older tokens get 134301 and fetch again")
            }
        } catch {
            FileHandle.standardError.write(Data("error: \(error.message) (\(error.code.rawValue))\n".utf8))
            throw ExitCode.failure
        }
    }
}
