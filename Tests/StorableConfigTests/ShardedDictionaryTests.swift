import Testing

@testable import StorableConfig

/// RecordCollection's snapshots hold their records in a ShardedDictionary; it must behave as one dictionary.
struct ShardedDictionaryTests {
    @Test func itBehavesAsOneDictionary() {
        var plain: [String: Int] = [:]
        var sharded = ShardedDictionary<Int>()
        for index in 0..<1_000 {
            plain["key \(index)"] = index
            sharded["key \(index)"] = index
        }
        for index in stride(from: 0, to: 1_000, by: 3) {
            plain["key \(index)"] = nil
            sharded["key \(index)"] = nil
        }
        plain["key 1"] = -1
        sharded["key 1"] = -1
        sharded["absent"] = nil
        #expect(sharded.count == plain.count)
        #expect(sharded.dictionary == plain)
        #expect(Set(sharded.keys) == Set(plain.keys))
        #expect(sharded.values.sorted() == plain.values.sorted())
        #expect(sharded["key 1"] == -1 && sharded["key 0"] == nil)
        #expect(ShardedDictionary(plain).dictionary == plain)
        #expect(ShardedDictionary<Int>().isEmpty && ShardedDictionary<Int>().anyValue == nil)
        #expect(sharded.anyValue.map { plain.values.contains($0) } == true)
    }

    @Test func aCopyIsIndependent() {
        var original = ShardedDictionary(["a": 1, "b": 2])
        var copy = original
        copy["a"] = 10
        copy["c"] = 3
        original["b"] = nil
        #expect(original.dictionary == ["a": 1])
        #expect(copy.dictionary == ["a": 10, "b": 2, "c": 3])
    }
}
