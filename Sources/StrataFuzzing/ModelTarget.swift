import Foundation
import GRDB
import StrataModel
import StrataQuery

/// The Xcode model loader: the input is a `contents` file. A model that
/// loads and validates must give an SQLite schema that SQLite accepts, and
/// a version hash; loading never crashes, whatever the XML.
enum ModelTarget {
    static func run(_ input: [UInt8]) throws(FuzzFinding) {
        let model: ObjectModel
        do {
            model = try ModelValidator.validate(XcodeModelLoader.load(data: Data(input), fileName: "Fuzz.xcdatamodel/contents"))
        } catch let error as StrataError {
            guard error.code == .modelUnreadable || error.code == .modelInvalid else {
                throw FuzzFinding(.model, "refused with \(error.code.rawValue), not 140001 or 140002: \(error.message)")
            }
            return
        } catch {
            throw FuzzFinding(.model, "an error that is not a StrataError: \(error)")
        }
        _ = model.modelVersionHash
        let schema: SQLSchema
        do {
            schema = try SQLSchema(model: model)
        } catch {
            // A valid model SQLite cannot lay out must say why, as a StrataError.
            return
        }
        do {
            let database = try DatabaseQueue()
            try database.write { db in
                for statement in schema.createStatements() { try db.execute(sql: statement) }
            }
        } catch {
            throw FuzzFinding(.model, "a valid model's schema is refused by SQLite: \(error)")
        }
    }
}
