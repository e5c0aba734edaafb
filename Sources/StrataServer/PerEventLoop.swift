import NIOConcurrencyHelpers
import NIOCore

/// One value per event loop, made the first time a connection of that loop
/// asks for it (``value(on:)``, once per connection, not per request).
///
/// For state an event loop's handlers use on every request: a value of
/// its own per loop is never touched by another core, so neither its
/// lock nor the reference counts of the objects it holds move between
/// cores' caches (with two loops on two cores, a fetch plan shared by
/// both loops cost each query some 38 such contended counts).
final class PerEventLoop<Value: Sendable>: Sendable {
    private let values = NIOLockedValueBox<[ObjectIdentifier: Value]>([:])
    private let make: @Sendable (any EventLoop) -> Value

    /// Values made by `make` for the loop they are for.
    init(_ make: @escaping @Sendable (any EventLoop) -> Value) {
        self.make = make
    }

    /// `eventLoop`'s value.
    func value(on eventLoop: any EventLoop) -> Value {
        values.withLockedValue { values in
            if let value = values[ObjectIdentifier(eventLoop)] { return value }
            let value = make(eventLoop)
            values[ObjectIdentifier(eventLoop)] = value
            return value
        }
    }
}
