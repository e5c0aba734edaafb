import Foundation
import StrataModel

/// The values of one sort key for a batch of objects, typed and contiguous,
/// in the order SQLite sorts their stored form: integers, Doubles (and
/// dates), and bytes — UTF-8 for strings, ``DecimalKey`` text for Decimals
/// (so decimal order is the stored keys' order by construction), raw bytes
/// for Data and UUIDs. Nil (and NaN) sorts first; descending keys reverse
/// the whole order, so nil comes last.
struct SortColumn {
    enum Values {
        case integers([Int64])
        case doubles([Double])
        /// All values' bytes in one buffer; `ends[i]` is where value `i` ends.
        case bytes([UInt8], ends: [Int])
    }

    let values: Values
    let present: [Bool]
    let ascending: Bool

    /// Three-way comparison of the values at positions `i` and `j`, in the key's direction.
    @inline(__always)
    func compare(_ i: Int, _ j: Int) -> Int {
        let c: Int
        switch (present[i], present[j]) {
        case (false, false): return 0
        case (false, true): c = -1
        case (true, false): c = 1
        case (true, true):
            switch values {
            case .integers(let v): c = v[i] < v[j] ? -1 : (v[i] > v[j] ? 1 : 0)
            case .doubles(let v): c = v[i] < v[j] ? -1 : (v[i] > v[j] ? 1 : 0)
            case .bytes(let buffer, let ends):
                let si = i == 0 ? 0 : ends[i - 1]
                let sj = j == 0 ? 0 : ends[j - 1]
                c = buffer.withUnsafeBufferPointer { all in
                    ValueComparison.compareBytes(
                        UnsafeBufferPointer(rebasing: all[si..<ends[i]]),
                        UnsafeBufferPointer(rebasing: all[sj..<ends[j]])
                    )
                }
            }
        }
        return ascending ? c : -c
    }

    /// Collects values of one attribute type.
    struct Builder {
        private enum Kind { case integer, double, date, decimal, text, data, uuid }
        private let kind: Kind
        private var integers: [Int64] = []
        private var doubles: [Double] = []
        private var buffer: [UInt8] = []
        private var ends: [Int] = []
        private var present: [Bool] = []

        init(type: AttributeType, capacity: Int) {
            switch type {
            case .integer16, .integer32, .integer64, .boolean: kind = .integer
            case .double, .float: kind = .double
            case .date: kind = .date
            case .decimal: kind = .decimal
            case .string, .uri: kind = .text
            case .uuid: kind = .uuid
            case .binary, .transformable, .undefined, .objectID, .composite: kind = .data
            }
            present.reserveCapacity(capacity)
            switch kind {
            case .integer: integers.reserveCapacity(capacity)
            case .double, .date: doubles.reserveCapacity(capacity)
            default: ends.reserveCapacity(capacity)
            }
        }

        mutating func append(_ value: PropertyValue) {
            switch kind {
            case .integer:
                let v = DomainValue.integer(value)
                integers.append(v ?? 0)
                present.append(v != nil)
            case .double:
                let v = DomainValue.double(value)
                doubles.append(v ?? 0)
                present.append(v != nil)
            case .date:
                let v = DomainValue.date(value)
                doubles.append(v ?? 0)
                present.append(v != nil)
            case .decimal:
                let key = DomainValue.decimal(value).flatMap { DecimalKey.encode($0) }
                if let key { buffer.append(contentsOf: key.utf8) }
                ends.append(buffer.count)
                present.append(key != nil)
            case .text:
                let text = DomainValue.text(value)
                if let text { buffer.append(contentsOf: text.utf8) }
                ends.append(buffer.count)
                present.append(text != nil)
            case .data:
                if case .binary(let data) = value {
                    buffer.append(contentsOf: data)
                    present.append(true)
                } else {
                    present.append(false)
                }
                ends.append(buffer.count)
            case .uuid:
                if case .uuid(let uuid) = value {
                    withUnsafeBytes(of: uuid.uuid) { buffer.append(contentsOf: $0) }
                    present.append(true)
                } else {
                    present.append(false)
                }
                ends.append(buffer.count)
            }
        }

        func build(ascending: Bool) -> SortColumn {
            let values: Values
            switch kind {
            case .integer: values = .integers(integers)
            case .double, .date: values = .doubles(doubles)
            default: values = .bytes(buffer, ends: ends)
            }
            return SortColumn(values: values, present: present, ascending: ascending)
        }
    }
}
