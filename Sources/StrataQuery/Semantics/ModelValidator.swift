import StrataModel

/// Validates a whole model: its structure (from StrataModel) and every
/// expression in it (fetched-property predicates, fetch request templates,
/// derivation expressions), reporting every problem at once.
public enum ModelValidator {
    /// Every diagnostic, errors and warnings, in model order.
    public static func diagnostics(for model: ObjectModel) -> [ModelDiagnostic] {
        var diagnostics = model.structuralDiagnostics()
        diagnostics += expressionDiagnostics(for: model)
        return diagnostics
    }

    /// Returns the model when it has no errors; otherwise throws
    /// ``StrataError/Code/modelInvalid`` listing every error.
    @discardableResult
    public static func validate(_ model: ObjectModel) throws -> ObjectModel {
        let errors = diagnostics(for: model).filter { $0.severity == .error }
        guard errors.isEmpty else {
            let where_ = model.sourceFile.map { " in \($0)" } ?? ""
            throw StrataError(.modelInvalid, "model '\(model.name)'\(where_) has \(errors.count) error(s)", details: errors.map(\.description))
        }
        return model
    }

    /// Problems in predicates and derivation expressions. Entities or
    /// targets that do not exist are left to the structural checks.
    static func expressionDiagnostics(for model: ObjectModel) -> [ModelDiagnostic] {
        let resolver = PredicateResolver(model: model)
        var diagnostics: [ModelDiagnostic] = []

        func report(_ error: any Error, entity: String?, property: String?, key: String? = nil, what: String) {
            let message: String
            if let error = error as? StrataError {
                // One problem per line: keep the first line of multi-line messages.
                message = error.message.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? error.message
            } else {
                message = "\(error)"
            }
            diagnostics.append(ModelDiagnostic(
                .error,
                file: model.sourceFile,
                line: model.line(entity: entity, property: property, key: key),
                entity: entity,
                property: property,
                message: "\(what): \(message)"
            ))
        }

        for entity in model.entities {
            for fetched in entity.fetchedProperties {
                guard let text = fetched.predicate, model.entity(named: fetched.entityName) != nil else { continue }
                do {
                    let predicate = try PredicateParser.parse(text)
                    try resolver.check(predicate, entity: fetched.entityName, fetchSourceEntity: entity.name, source: text)
                } catch {
                    report(error, entity: entity.name, property: fetched.name, what: "fetched property predicate \"\(text)\"")
                }
            }
            for attribute in entity.attributes where attribute.isDerived {
                do {
                    _ = try resolver.resolveDerivation(of: attribute, in: entity.name)
                } catch {
                    report(error, entity: entity.name, property: attribute.name, what: "derivation \"\(attribute.derivationExpression ?? "")\"")
                }
            }
        }
        for template in model.fetchRequestTemplates {
            guard let text = template.predicate, model.entity(named: template.entityName) != nil else { continue }
            do {
                let predicate = try PredicateParser.parse(text)
                try resolver.check(predicate, entity: template.entityName, source: text)
            } catch {
                report(error, entity: nil, property: "fetch request '\(template.name)'", key: "fetchRequest:\(template.name)", what: "predicate \"\(text)\"")
            }
        }
        return diagnostics
    }
}
