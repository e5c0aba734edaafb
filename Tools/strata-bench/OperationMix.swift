import Foundation

/// The operations `strata-bench` sends.
enum BenchOperation: String, CaseIterable, Sendable, Comparable {
    /// Fetch one object by ID (a refresh without fetched properties).
    case get
    /// Run the query predicate (an indexed range by default), first page.
    case query
    /// Save one new Book.
    case insert
    /// Change one Book's pages, based on the version last seen.
    case update
    /// Refresh one Book with its fetched properties.
    case refresh
    /// Count the objects the query predicate selects.
    case count

    /// The position in reports.
    var ordinal: Int {
        switch self {
        case .get: 0
        case .query: 1
        case .insert: 2
        case .update: 3
        case .refresh: 4
        case .count: 5
        }
    }

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.ordinal < rhs.ordinal }
}

/// `--mix get=70,query=10,…`: relative weights of the operations.
struct OperationMix: Sendable, CustomStringConvertible {
    /// Operations with a weight above zero, with cumulative weights.
    private(set) var cumulative: [(operation: BenchOperation, upTo: Int)] = []
    /// Sum of the weights.
    private(set) var total = 0
    /// The weights as given.
    private(set) var weights: [BenchOperation: Int] = [:]

    /// Parses `name=weight` pairs separated by commas.
    init(parsing text: String) throws {
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, let operation = BenchOperation(rawValue: pair[0]), let weight = Int(pair[1]), (0...1_000_000).contains(weight) else {
                throw BenchError.usage("--mix: '\(part)' is not NAME=WEIGHT with NAME one of \(BenchOperation.allCases.map(\.rawValue).joined(separator: ", ")) and WEIGHT a whole number from 0 to 1000000")
            }
            weights[operation] = weight
        }
        for operation in BenchOperation.allCases {
            guard let weight = weights[operation], weight > 0 else { continue }
            total += weight
            cumulative.append((operation, total))
        }
        guard total > 0 else { throw BenchError.usage("--mix: every weight is zero") }
    }

    /// The operation for a random number in `0..<total`.
    func pick(_ roll: Int) -> BenchOperation {
        for entry in cumulative where roll < entry.upTo { return entry.operation }
        return cumulative[cumulative.count - 1].operation
    }

    /// Whether an operation is in the mix.
    func includes(_ operation: BenchOperation) -> Bool { (weights[operation] ?? 0) > 0 }

    /// `get=70,query=10,…`.
    var description: String {
        BenchOperation.allCases.compactMap { op in weights[op].map { "\(op.rawValue)=\($0)" } }.joined(separator: ",")
    }
}
