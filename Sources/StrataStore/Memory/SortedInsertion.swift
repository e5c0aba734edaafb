/// Binary search for the place of a new element in a sorted list.
enum SortedInsertion {
    /// The first index of `list` whose element is not before the new one
    /// (`precedes(element)` is true for every element before it), found in
    /// O(log n) calls of `precedes`.
    static func index<T>(in list: [T], after precedes: (T) -> Bool) -> Int {
        var low = 0
        var high = list.count
        while low < high {
            let middle = low + (high - low) / 2
            if precedes(list[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
