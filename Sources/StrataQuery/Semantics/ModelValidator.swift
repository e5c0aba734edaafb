import StrataModel

/// Validates a whole model: its structure (from StrataModel) and every
/// expression in it (fetched-property predicates, fetch request templates,
/// derivation expressions), reporting every problem at once.
public enum ModelValidator {
    /// Every diagnostic, errors and warnings, in model order.
    public static func diagnostics(for model: ObjectModel) -> [ModelDiagnostic] {
        model.structuralDiagnostics()
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
}
