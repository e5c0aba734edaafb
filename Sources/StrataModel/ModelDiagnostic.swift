/// One problem found in a model: where it is and what is wrong.
public struct ModelDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Sendable, Hashable {
        /// The model cannot be used.
        case error
        /// The model works but is probably not what was meant.
        case warning
    }

    /// Error or warning.
    public var severity: Severity
    /// The model file, when the model came from one.
    public var file: String?
    /// The 1-based line in ``file``, when known.
    public var line: Int?
    /// The entity at fault, if any.
    public var entity: String?
    /// The property (or fetch template, configuration member) at fault, if any.
    public var property: String?
    /// What is wrong.
    public var message: String

    /// Creates a diagnostic.
    public init(
        _ severity: Severity,
        file: String? = nil,
        line: Int? = nil,
        entity: String? = nil,
        property: String? = nil,
        message: String
    ) {
        self.severity = severity
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `file:line: error: Entity.property: message`, omitting what is unknown.
    public var description: String {
        var text = ""
        if let file {
            text += file
            if let line { text += ":\(line)" }
            text += ": "
        }
        text += "\(severity.rawValue): "
        switch (entity, property) {
        case let (entity?, property?): text += "\(entity).\(property): "
        case let (entity?, nil): text += "\(entity): "
        case let (nil, property?): text += "\(property): "
        case (nil, nil): break
        }
        return text + message
    }
}
