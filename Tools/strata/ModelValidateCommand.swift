import ArgumentParser
import StrataModel
import StrataQuery

/// `strata model validate PATH`: reports every problem of a model.
///
/// Exit status 0 when there is no error (warnings go to stderr), 1 when there
/// are errors (one per line on stderr) or the model cannot be read.
struct ModelValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a model's structure and expressions; exit 1 if it has errors.",
        discussion: """
            Prints each problem on stderr as `file:line: severity: Entity.property: message`.
            On success prints `valid: N entities` on stdout.
            """
    )

    @Argument(help: "An .xcdatamodeld folder, an .xcdatamodel folder, or a model `contents` file.")
    var path: String

    func run() throws {
        let model = try Console.loadModel(at: path)
        let diagnostics = ModelValidator.diagnostics(for: model)
        for diagnostic in diagnostics {
            Console.error(diagnostic.description)
        }
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.count - errors
        let warningText = warnings == 1 ? "1 warning" : "\(warnings) warnings"
        if errors > 0 {
            print("invalid: \(errors == 1 ? "1 error" : "\(errors) errors"), \(warningText)")
            throw ExitCode.failure
        }
        let entities = model.entities.count == 1 ? "1 entity" : "\(model.entities.count) entities"
        print("valid: \(entities)" + (warnings > 0 ? " (\(warningText))" : ""))
    }
}
