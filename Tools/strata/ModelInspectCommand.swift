import ArgumentParser
import Foundation
import StrataModel

/// `strata model inspect PATH [--json]`: prints a model's entities,
/// properties, configurations and fetch request templates.
struct ModelInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a model as a readable tree, or as JSON with --json."
    )

    @Argument(help: "An .xcdatamodeld folder, an .xcdatamodel folder, or a model `contents` file.")
    var path: String

    @Flag(name: .long, help: "Print JSON (sorted keys) instead of a tree.")
    var json = false

    func run() throws {
        let model = try Console.loadModel(at: path)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(ModelJSON(model))
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(ModelTreePrinter.render(model), terminator: "")
        }
    }
}
