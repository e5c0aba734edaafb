import NIOConcurrencyHelpers

/// Values computed from the model alone (entity layouts, each entity's
/// ``EntityPlan``), shared by every context of a coordinator and by saves
/// that take no context. A server makes a context per request: each would
/// otherwise compute them all again. Contexts keep their own dictionary in
/// front, so a bulk save takes no lock per object.
final class ModelCache<Value: Sendable>: Sendable {
    private let values = NIOLockedValueBox<[String: Value]>([:])

    /// The value for `key`, made by `make` the first time (should two
    /// callers race, the first one stored is kept and returned to both).
    func value(for key: String, make: () throws -> Value) rethrows -> Value {
        if let cached = values.withLockedValue({ $0[key] }) { return cached }
        let made = try make()
        return values.withLockedValue { values in
            if let existing = values[key] { return existing }
            values[key] = made
            return made
        }
    }
}
