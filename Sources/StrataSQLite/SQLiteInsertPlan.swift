import NIOConcurrencyHelpers
import StrataModel
import StrataStore
import StrataQuery

/// Where each slot of one ``PropertyValues/Layout`` goes in an entity's
/// INSERT row, worked out once per (entity, layout) instead of looking up
/// every value's name in every row.
///
/// The inserts of a save normally share one layout per entity (the
/// context's), so a save computes a handful of plans; values outside the
/// layout still go through the name lookup.
struct SQLiteInsertPlan: Sendable {
    /// What one slot of the layout is in the entity.
    enum Step: Sendable {
        /// A persisted attribute, at `position` of the row.
        case attribute(position: Int, type: AttributeType, name: String)
        /// A persisted to-one, at `position` of the row.
        case toOne(position: Int)
        /// Anything else (transient, to-many, unknown): checked by name.
        case other
    }

    let entity: SQLiteStoreMapping.Entity
    let layout: PropertyValues.Layout
    /// One step per slot of ``layout``.
    let steps: [Step]
    /// Slots whose values are checked before the transaction (to-ones and
    /// names that are not attributes); attributes are checked as they are encoded.
    let checkedSlots: [Int]

    /// The plan for `entity` and values of `layout`: its steps worked out
    /// once per (entity, layout), kept on the entity for the last layout
    /// seen (saves of one entity normally share one).
    init(entity: SQLiteStoreMapping.Entity, layout: PropertyValues.Layout) {
        self.entity = entity
        self.layout = layout
        let compiled = entity.extras.lastInsertSteps.withLockedValue { last -> CompiledSteps in
            if let last, last.layout === layout { return last }
            let made = CompiledSteps(entity: entity, layout: layout)
            last = made
            return made
        }
        steps = compiled.steps
        checkedSlots = compiled.checkedSlots
    }

    /// The steps of one (entity, layout), without the entity (which keeps
    /// the last of these).
    final class CompiledSteps: Sendable {
        let layout: PropertyValues.Layout
        let steps: [Step]
        let checkedSlots: [Int]

        init(entity: SQLiteStoreMapping.Entity, layout: PropertyValues.Layout) {
            self.layout = layout
            var steps: [Step] = []
            var checked: [Int] = []
            steps.reserveCapacity(layout.names.count)
            for (slot, name) in layout.names.enumerated() {
                switch entity.slot(named: name) {
                case .attribute(let field, let position)?:
                    steps.append(.attribute(position: position, type: entity.attributes[field].type, name: name))
                case .toOne(_, let position)?:
                    steps.append(.toOne(position: position))
                    checked.append(slot)
                case nil:
                    steps.append(.other)
                    checked.append(slot)
                }
            }
            self.steps = steps
            self.checkedSlots = checked
        }
    }

    /// Whether this plan is the one for `entity` and values of `layout`.
    @inline(__always)
    func fits(_ entity: SQLiteStoreMapping.Entity, _ layout: PropertyValues.Layout) -> Bool {
        self.entity === entity && self.layout === layout
    }

    /// Writes the row of one insert into `cells` from `start` (its
    /// `insertColumns.count` cells, all `.null` on entry): `Z_ENT`, every
    /// attribute and every to-one that names a saved object. `Z_PK`,
    /// to-ones naming inserts of the save and to-many foreign keys are left
    /// to the transaction, which knows the keys.
    func encode(_ values: PropertyValues, into cells: inout [SQLValue], at start: Int) throws(StrataError) {
        cells[start + 1] = .integer(entity.number)
        for (slot, step) in steps.enumerated() {
            guard let value = values[slot: slot] else { continue }
            switch step {
            case .attribute(let position, let type, let name):
                cells[start + position] = try SQLiteAttributeEncoder.cell(value, type: type, entity: entity.name, attribute: name)
            case .toOne(let position):
                cells[start + position] = Self.storedKey(value)
            case .other:
                break
            }
        }
        let outside = values.valuesOutsideLayout
        guard !outside.isEmpty else { return }
        for (name, value) in outside {
            switch entity.slot(named: name) {
            case .attribute(let field, let position)?:
                cells[start + position] = try SQLiteAttributeEncoder.cell(value, type: entity.attributes[field].type, entity: entity.name, attribute: name)
            case .toOne(_, let position)?:
                cells[start + position] = Self.storedKey(value)
            case nil:
                break
            }
        }
    }

    /// The stored key of a to-one value already checked: a saved object's
    /// primary key, NULL otherwise (no object, or an insert of this save).
    static func storedKey(_ value: PropertyValue) -> SQLValue {
        if case .object(let target) = value, case .permanent(let key) = target.key { return .integer(key) }
        return .null
    }
}
