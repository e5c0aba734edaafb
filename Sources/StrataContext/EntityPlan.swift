import Foundation
import NIOConcurrencyHelpers
import StrataModel
import StrataQuery

/// What saving an object of one entity needs that depends on the model
/// alone, built once per coordinator (``Coordinator/entityPlan(of:)``) and
/// used by every save route: the layout values are kept in, the insert
/// template (defaults), the validation plan, the derived attributes with
/// their expressions resolved, and whether a new object of the entity can
/// be saved without a context (``insertsDirectly``).
final class EntityPlan: Sendable {
    /// A derived attribute, in the model's order (the order a save computes
    /// them in: a later one reads the earlier ones' results). A class, so
    /// that a save does not copy it, with its attribute's description, for
    /// every insert.
    final class Derivation: Sendable {
        let attribute: AttributeDescription
        /// The fields a save reads, apart (reading them from `attribute`
        /// would copy the whole description).
        let name: String
        let type: AttributeType
        /// The expression resolved against the model, or why it cannot be
        /// (thrown by every save that needs it).
        let operand: Result<QueryOperand, any Error>
        /// The attribute's slot in the layout's values; nil when transient.
        let slot: Int?

        init(attribute: AttributeDescription, operand: Result<QueryOperand, any Error>, slot: Int?) {
            self.attribute = attribute
            name = attribute.name
            type = attribute.type
            self.operand = operand
            self.slot = slot
        }

        /// Converts a derived value to an attribute's type (`now()` into a
        /// Double is seconds since 2001; counts into Decimal or Double).
        static func converted(_ value: PropertyValue, to type: AttributeType) -> PropertyValue {
            switch (value, type) {
            case (.date(let date), .double), (.date(let date), .float):
                return .double(date.timeIntervalSinceReferenceDate)
            case (.integer(let i), .double), (.integer(let i), .float):
                return .double(Double(i))
            case (.integer(let i), .decimal):
                return .decimal(Decimal(i))
            case (.double(let d), .decimal):
                return Decimal(string: "\(d)").map { .decimal($0) } ?? .null
            case (.double(let d), .integer16), (.double(let d), .integer32), (.double(let d), .integer64):
                return d.isFinite ? .integer(Int64(d.rounded(.towardZero))) : .null
            case (.boolean(let b), .integer16), (.boolean(let b), .integer32), (.boolean(let b), .integer64):
                return .integer(b ? 1 : 0)
            default:
                return value
            }
        }
    }

    let entity: String
    let layout: ObjectGraph.EntityLayout
    /// What a new object starts from; the error for an abstract entity.
    let template: Result<InsertTemplate, StrataError>
    /// The template's defaults when the entity inserts directly (the
    /// template matched out of its result would be copied for every insert).
    let directInsertDefaults: PropertyValues?
    let validation: ValidationPlan
    let derivations: [Derivation]
    /// Whether a new object of the entity, with only attribute values set,
    /// can be saved without a context: its save then depends on nothing
    /// but those values.
    /// - the entity is concrete;
    /// - every persisted relationship is optional with no minimum count (an
    ///   insert with none set passes validation, and writes no other row);
    /// - no attribute can hold an object ID (undefined, object ID,
    ///   composite types: a context checks those against the stores);
    /// - every derived attribute is persisted and derived from the
    ///   object's own persisted attributes (no relationship, no transient
    ///   attribute, which a transient rule might compute).
    let insertsDirectly: Bool
    /// Guards ``compiledEvaluators``.
    private let evaluatorLock = NIOLock()
    /// The derivations compiled on first direct insert. Compiled evaluators
    /// hold closures that are not `Sendable`: this is read, written and
    /// used only while `evaluatorLock` is held (``derived(_:id:)``), and no
    /// evaluator is ever handed out, so no two threads touch it at once.
    nonisolated(unsafe) private var compiledEvaluators: [OperandEvaluator<InsertValuesAccessor>]?
    private let model: ObjectModel

    /// The plan of a known entity.
    init(entity: String, model: ObjectModel, resolver: PredicateResolver, layout: ObjectGraph.EntityLayout) {
        self.entity = entity
        self.model = model
        self.layout = layout
        template = Result { () throws(StrataError) in try InsertTemplate(entity: entity, model: model, layout: layout) }
        validation = ValidationPlan(entity: entity, model: model)
        var derivations: [Derivation] = []
        var direct = (try? template.get()) != nil
        for attribute in model.attributes(of: entity) {
            switch attribute.type {
            case .undefined, .objectID, .composite: direct = false
            default: break
            }
            guard attribute.isDerived, attribute.derivationExpression != nil else { continue }
            let slot = attribute.isTransient ? nil : layout.attribute(named: attribute.name)?.slot
            let operand = Result { try resolver.resolveDerivation(of: attribute, in: entity) }
            derivations.append(Derivation(attribute: attribute, operand: operand, slot: slot))
            // Only what the object's own persisted attributes give.
            if slot == nil { direct = false }
            if direct, (try? operand.get()).flatMap({ try? OperandEvaluator($0, entity: entity, model: model, accessor: InsertValuesAccessor()) }) == nil {
                direct = false
            }
        }
        for relationship in model.relationships(of: entity) where !relationship.isTransient {
            if !relationship.isOptional || relationship.minCount > 0 { direct = false }
        }
        self.derivations = derivations
        insertsDirectly = direct
        directInsertDefaults = direct ? (try? template.get())?.defaults : nil
    }

    /// The persisted values of a new object with `values` set, as a context
    /// would save them: defaults, the values set (checked as
    /// `setValue(_:forKey:)` checks them), derived attributes computed; its
    /// attribute validation problems are appended to `problems`.
    ///
    /// Nil when a context must insert it (or say why it cannot): the entity
    /// does not qualify (``insertsDirectly``), a value is for a
    /// relationship, a transient attribute or an unknown name, a value does
    /// not fit its attribute, or a derivation fails.
    func directInsertValues(_ values: [String: PropertyValue], id: ObjectID, problems: inout [PropertyFailure]) -> PropertyValues? {
        guard var prepared = directInsertDefaults else { return nil }
        for (key, value) in values {
            guard let attribute = layout.attribute(named: key), !attribute.isTransient, let slot = attribute.slot,
                  let checked = try? ObjectGraph.checked(value, type: attribute.type, name: key, entity: entity) else { return nil }
            prepared[key, slot: slot, in: layout.values] = checked
        }
        guard derive(&prepared, id: id) else { return nil }
        validation.insertProblems(prepared, objectID: id, into: &problems)
        return prepared
    }

    /// Computes every derived attribute into `values`, converted and
    /// checked as a context's save would (in the model's order); false when
    /// one fails (the save then goes through a context, which reports it).
    /// Only for entities that insert directly.
    private func derive(_ values: inout PropertyValues, id: ObjectID) -> Bool {
        guard !derivations.isEmpty else { return true }
        return evaluatorLock.withLock { () -> Bool in
            if compiledEvaluators == nil {
                compiledEvaluators = try? derivations.map { try OperandEvaluator($0.operand.get(), entity: entity, model: model, accessor: InsertValuesAccessor()) }
            }
            guard let evaluators = compiledEvaluators else { return false }
            // By index: iterating a zip copies the evaluators.
            for index in 0..<min(derivations.count, evaluators.count) {
                let derivation = derivations[index]
                let (type, name) = (derivation.type, derivation.name)
                guard let slot = derivation.slot,
                      let raw = try? evaluators[index].value(of: InsertValuesAccessor.Row(id: id, values: values)),
                      let checked = try? ObjectGraph.checked(Derivation.converted(raw, to: type), type: type, name: name, entity: entity)
                else { return false }
                if (values[name, slot: slot, in: layout.values] ?? .null) != checked {
                    values[name, slot: slot, in: layout.values] = checked
                }
            }
            return true
        }
    }
}
