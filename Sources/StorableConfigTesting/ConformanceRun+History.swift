import StorableConfig

/// The guarantees of ``StorableConfig/ConfigStoreHistory``, checked when a store adopts it.
extension Run {
    mutating func historyAndConditionalWritesHold(_ store: any ConfigStoreHistory) throws {
        let key = key("history")
        try store.setValue(.int(1), forKey: key)
        try store.setValue(.int(2), forKey: key)
        let history = try store.history(forKey: key, limit: 10)
        try expect(history.count >= 2, "after two writes, history(forKey:limit:) listed \(history.map(\.text))")
        try expect(
            Equivalence.holds(history[0].value, .int(2)) && Equivalence.holds(history[1].value, .int(1)),
            "after writing 1 then 2, history(forKey:limit:) listed \(history.map(\.text)), not 2 then 1")
        try expect(
            history[0].revision > history[1].revision && history[1].revision > 0,
            "the revisions \(history.map(\.revision)) are not positive and newest first")
        let limited = try store.history(forKey: key, limit: 1)
        try expect(limited.count == 1, "history(forKey:limit: 1) listed \(limited.count) values")
        let earlier = try store.value(forKey: key, atRevision: history[1].revision)
        try expect(
            Equivalence.holds(earlier?.value, .int(1)),
            "value(forKey:atRevision: \(history[1].revision)) read \(earlier?.text ?? "nothing"), not 1")

        var refused = false
        do {
            try store.setValue(.int(3), forKey: key, ifModifiedAt: history[1].revision)
        } catch StorableConfigError.changedSinceRevision {
            refused = true
        }
        try expect(refused, "a conditional write at a revision the key is no longer at was made")
        try expect(
            Equivalence.holds(try store.value(forKey: key), .int(2)),
            "a refused conditional write changed the value")
        try store.setValue(.int(3), forKey: key, ifModifiedAt: history[0].revision)
        try expect(
            Equivalence.holds(try store.value(forKey: key), .int(3)),
            "a conditional write at the key's revision was not read back")

        let absent = self.key("history-absent")
        try store.setValue(.int(4), forKey: absent, ifModifiedAt: 0)
        try expect(
            Equivalence.holds(try store.value(forKey: absent), .int(4)),
            "a conditional write at revision 0 to a key with no value was not read back")
    }
}
