import Foundation

/// Deterministic Book rows shared by both benchmarks and both sides.
struct BookDataset {
    struct Row {
        var uuid: UUID
        var title: String
        var author: String
        var publishDate: Date
        var price: Decimal
        var priceText: String
        var pages: Int64
    }

    let rows: [Row]

    init(count: Int) {
        var generator = SplitMix(seed: 42)
        let words = ["river", "Crème", "shadow", "garden", "Night", "ÉTÉ", "iron", "Glass", "winter", "North", "silent", "Ocean", "paper", "Brûlée", "stone", "Light"]
        let authors = ["Le Guin", "Tolkien", "Herbert", "Atwood", "Borges", "Calvino", "Morrison", "Ishiguro"]
        var rows: [Row] = []
        rows.reserveCapacity(count)
        for i in 0..<count {
            let title = (0..<3).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ") + " \(i)"
            let cents = Int(generator.next() % 5000) + 99
            let priceText = "\(cents / 100).\(String(format: "%02d", cents % 100))"
            rows.append(Row(
                uuid: UUID(),
                title: title,
                author: authors[Int(generator.next() % UInt64(authors.count))],
                publishDate: Date(timeIntervalSinceReferenceDate: Double(generator.next() % 700_000_000)),
                price: Decimal(string: priceText) ?? 0,
                priceText: priceText,
                pages: Int64(generator.next() % 1500) + 20
            ))
        }
        self.rows = rows
    }
}

/// A small deterministic generator.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
