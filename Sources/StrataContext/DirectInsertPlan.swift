import Foundation
import StrataModel
import StrataQuery
import NIOConcurrencyHelpers

/// What a direct insert of one entity needs, computed once per coordinator
/// from the model: whether the entity qualifies at all, its insert template
/// (layout and defaults), its validation plan and its derived attributes.
///
/// An entity qualifies when a context's save of a new object of it, with
/// only attribute values set, depends on nothing but those values:
/// - it is concrete;
/// - every persisted relationship is optional with no minimum count (an
///   insert with none set passes validation, and writes no other row);
/// - no attribute can hold an object ID (undefined, object ID, composite
///   types: a context checks those against the stores);
/// - every derived attribute is persisted and derived from the object's
///   own persisted attributes (no relationship, no transient attribute,
///   which a transient rule might compute).
final class DirectInsertPlan: Sendable {
    /// A derived attribute, in the model's order (the order a context
    /// computes them in; a later one reads the earlier ones' results).
    struct Derivation: Sendable {
        let attribute: AttributeDescription
        let operand: QueryOperand
        let slot: Int
    }

    let entity: String
    /// Nil when the entity does not qualify.
    let template: Context.InsertTemplate?
    let validation: Context.ValidationPlan
    let derivations: [Derivation]
    /// Guards ``compiledEvaluators``.
    private let evaluatorLock = NIOLock()
    /// The derivations compiled on first use. Compiled evaluators hold
    /// closures that are not `Sendable`: this is read, written and used
    /// only while `evaluatorLock` is held (``derived(_:id:layout:)``), and
    /// no evaluator is ever handed out, so no two threads touch it at once.
    nonisolated(unsafe) private var compiledEvaluators: [OperandEvaluator<InsertValuesAccessor>]?
    private let model: ObjectModel

    init(entity: String, coordinator: Coordinator) {
        self.entity = entity
        let model = coordinator.model
        self.model = model
        validation = coordinator.validationPlans.value(for: entity) { Context.ValidationPlan(entity: entity, model: model) }
        let layout = coordinator.layouts.value(for: entity) { ObjectGraph.EntityLayout(entity: entity, model: model) }
        var derivations: [Derivation] = []
        let template: Context.InsertTemplate? = {
            guard let template = try? coordinator.insertTemplates.value(for: entity, make: { try Context.InsertTemplate(entity: entity, model: model, layout: layout) }) else { return nil }
            for relationship in model.relationships(of: entity) where !relationship.isTransient {
                guard relationship.isOptional, relationship.minCount == 0 else { return nil }
            }
            for attribute in model.attributes(of: entity) {
                switch attribute.type {
                case .undefined, .objectID, .composite: return nil
                default: break
                }
                guard attribute.isDerived, attribute.derivationExpression != nil else { continue }
                guard !attribute.isTransient, let slot = layout.attribute(named: attribute.name)?.slot else { return nil }
                let key = "\(entity).\(attribute.name)"
                let resolver = coordinator.resolver
                guard let operand = try? coordinator.derivations.value(for: key, make: { try resolver.resolveDerivation(of: attribute, in: entity) }),
                      (try? OperandEvaluator(operand, entity: entity, model: model, accessor: InsertValuesAccessor())) != nil else { return nil }
                derivations.append(Derivation(attribute: attribute, operand: operand, slot: slot))
            }
            return template
        }()
        self.template = template
        self.derivations = template == nil ? [] : derivations
    }

    /// `values` with every derived attribute computed, converted and
    /// checked as a context's save would (in the model's order: a later
    /// derivation reads the earlier ones' results); nil when one fails
    /// (the save then goes through a context, which reports it).
    func derived(_ values: PropertyValues, id: ObjectID, layout: PropertyValues.Layout) -> PropertyValues? {
        guard !derivations.isEmpty else { return values }
        return evaluatorLock.withLock { () -> PropertyValues? in
            if compiledEvaluators == nil {
                compiledEvaluators = try? derivations.map { try OperandEvaluator($0.operand, entity: entity, model: model, accessor: InsertValuesAccessor()) }
            }
            guard let evaluators = compiledEvaluators else { return nil }
            var values = values
            for (derivation, evaluator) in zip(derivations, evaluators) {
                guard let raw = try? evaluator.value(of: InsertValuesAccessor.Row(id: id, values: values)),
                      let checked = try? ObjectGraph.checked(Context.converted(raw, to: derivation.attribute), for: derivation.attribute, entity: entity) else { return nil }
                if (values[derivation.attribute.name, slot: derivation.slot, in: layout] ?? .null) != checked {
                    values[derivation.attribute.name, slot: derivation.slot, in: layout] = checked
                }
            }
            return values
        }
    }
}

/// The values of one object being inserted directly, as derivations read
/// them: its own persisted attributes, nothing else (compiling a
/// derivation that reads more fails, and the entity does not qualify).
package struct InsertValuesAccessor: ObjectGraphAccessor {
    package struct Row {
        package var id: ObjectID
        package var values: PropertyValues

        package init(id: ObjectID, values: PropertyValues) {
            self.id = id
            self.values = values
        }
    }
    package typealias Object = Row

    package init() {}

    package func attributeKey(_ attribute: AttributeDescription, entity: String) throws(StrataError) -> AttributeDescription {
        guard !attribute.isTransient else {
            throw StrataError(.predicateType, "a direct insert does not compute transient '\(entity).\(attribute.name)'")
        }
        return attribute
    }

    package func relationshipKey(_ relationship: RelationshipDescription, entity: String) throws(StrataError) -> RelationshipDescription {
        throw StrataError(.predicateType, "a direct insert does not follow '\(entity).\(relationship.name)'")
    }

    package func value(_ attribute: AttributeDescription, of object: Row) -> PropertyValue {
        object.values[attribute.name] ?? .null
    }

    package func destination(_ relationship: RelationshipDescription, of object: Row) -> Row? { nil }

    package func destinations(_ relationship: RelationshipDescription, of object: Row) -> [Row] { [] }

    package func objectID(of object: Row) -> ObjectID { object.id }
}
