import ArgumentParser
import Foundation
import StrataClient

/// `strata backup [--store S] [--force] FILE`: a consistent copy of one
/// store, made by the server while saves go on, written to FILE.
struct BackupCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy one store, while the server keeps serving, into a file (admin only under access rules).",
        discussion: """
            The copy is a store file of the store's kind (SQLite, or binary for binary and in-memory \
            stores) holding every save acknowledged before the backup began. A server opens it as \
            a store, e.g. --store Book=sqlite:FILE?readonly; docs/operations.md tells how to restore it. \
            The file is written as FILE.partial, checked against the server's length and SHA-256, \
            then renamed.
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    @Option(help: "The store, by configuration, entity or identifier (needed when the server has several).")
    var store: String = ""

    @Flag(help: "Replace FILE if it exists.")
    var force = false

    @Argument(help: "The file to write.")
    var file: String

    func execute(in session: Session) async throws {
        let url = URL(fileURLWithPath: file)
        if !force, FileManager.default.fileExists(atPath: url.path) {
            throw CLIError.usage("\(file) exists: give --force to replace it")
        }
        let result = try await session.client.backup(store: store, to: url)
        Console.line("\(file): \(result.byteCount) bytes, \(result.format) store \(result.storeID)")
    }
}
