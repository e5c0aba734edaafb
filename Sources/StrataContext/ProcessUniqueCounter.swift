import Foundation
import Synchronization

/// Hands out process-unique token strings.
enum ProcessUniqueCounter {
    private static let counter = Atomic<Int>(0)
    private static let prefix = UUID().uuidString

    /// `<process uuid>-<n>`.
    static func next() -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        return "\(prefix)-\(n)"
    }
}
