import Testing
import StrataModel

@Suite struct NameLookupTests {
    @Test(arguments: [3, NameLookup<Int>.scanLimit, NameLookup<Int>.scanLimit + 1, 200])
    func findsEveryNameAndNothingElse(count: Int) {
        var names: [String: Int] = [:]
        for i in 0..<count { names["name\(i)"] = i }
        // Same lengths as real names, and a long one past small strings.
        names["a-rather-long-property-name-\(count)"] = -1
        let lookup = NameLookup(names)
        for (name, value) in names {
            #expect(lookup[name] == value)
            // An equal name in other storage is found too.
            #expect(lookup[String(name.reversed().reversed())] == value)
        }
        #expect(lookup["name\(count)"] == nil)
        // Canonically equivalent names of other lengths, as a dictionary finds them.
        let composed = NameLookup(["caf\u{E9}": 1, "x": 2])
        #expect(composed["cafe\u{301}"] == 1)
        let decomposed = NameLookup(["cafe\u{301}": 1])
        #expect(decomposed["caf\u{E9}"] == 1)
        #expect(lookup["nam"] == nil)
        #expect(lookup[""] == nil)
    }
}
