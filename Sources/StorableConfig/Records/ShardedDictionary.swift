/// A dictionary split by key hash into shards, so that a copy which then changes a few keys copies the few
/// shards it changes (and an array of shard references), not every entry.
///
/// A ``RecordCollection`` publishes immutable snapshots: each change builds the next one from a copy of the
/// last, outside its lock. With one dictionary per snapshot, upserting one record into 10,000 copied 10,000
/// records and 10,000 stored entries; sharded 64 ways, it copies about 160 of each.
struct ShardedDictionary<Value> {
    private static var shardCount: Int { 64 }

    private var shards: [[String: Value]]
    private(set) var count = 0

    init() {
        shards = Array(repeating: [:], count: Self.shardCount)
    }

    init(_ dictionary: [String: Value]) {
        self.init()
        for (key, value) in dictionary { self[key] = value }
    }

    /// The shard of `key`: its hash, which is stable within the process (these never leave it).
    private static func shard(of key: String) -> Int {
        Int(UInt(bitPattern: key.hashValue) % UInt(shardCount))
    }

    subscript(key: String) -> Value? {
        get { shards[Self.shard(of: key)][key] }
        set {
            let shard = Self.shard(of: key)
            if let newValue {
                if shards[shard].updateValue(newValue, forKey: key) == nil { count += 1 }
            } else if shards[shard].removeValue(forKey: key) != nil {
                count -= 1
            }
        }
    }

    var isEmpty: Bool { count == 0 }

    var keys: [String] { shards.flatMap(\.keys) }

    var values: [Value] { shards.flatMap(\.values) }

    /// Some value, if there is one, without gathering them all.
    var anyValue: Value? {
        shards.first { !$0.isEmpty }?.first?.value
    }

    /// The entries as one dictionary.
    var dictionary: [String: Value] {
        Dictionary(uniqueKeysWithValues: shards.joined().map { ($0.key, $0.value) })
    }
}
