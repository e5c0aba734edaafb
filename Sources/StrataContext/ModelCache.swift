import NIOConcurrencyHelpers

/// Values computed from the model alone (derived-attribute expressions,
/// entity layouts, validation plans, insert templates), shared by every
/// context of a coordinator. A server makes a context per request, and
/// each used to compute them all again; contexts still keep their own
/// dictionary in front, so a bulk save takes no lock per object.
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
