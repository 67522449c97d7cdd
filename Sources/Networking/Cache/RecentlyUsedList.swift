/// Values by key, ordered from the most recently used to the least, each with a cost that the list
/// totals: the bookkeeping of a least-recently-used store. Every operation but ``removeAll(where:)`` is O(1).
///
/// The entries live in slots of two arrays that a dictionary points into; the slots' links form a
/// doubly linked list from the newest entry to the oldest. Unlinking a slot and putting it at the front
/// only rewrites four indices, so a use allocates nothing and retains nothing. A removed entry's slot is
/// reused by the next insertion.
///
/// Not thread-safe: the store that owns the list guards it.
struct RecentlyUsedList<Key: Hashable, Value> {
    private struct Link {
        var newer: Int
        var older: Int
        var cost: Int
    }

    private static var none: Int { -1 }

    private var slots: [Key: Int] = [:]
    private var links: [Link] = []
    private var entries: [(key: Key, value: Value)?] = []
    private var freeSlots: [Int] = []
    private var newest = none
    private var oldest = none

    /// The sum of the entries' costs.
    private(set) var totalCost = 0

    /// How many entries there are.
    var count: Int { slots.count }

    /// The key of the least recently used entry, or `nil` when there is none.
    var oldestKey: Key? { oldest == Self.none ? nil : entries[oldest]?.key }

    /// Whether an entry is stored under `key` (not a use).
    func contains(_ key: Key) -> Bool { slots[key] != nil }

    /// The value stored under `key`, without counting as a use.
    func peek(_ key: Key) -> Value? {
        slots[key].flatMap { entries[$0]?.value }
    }

    /// The value stored under `key`, which becomes the most recently used entry.
    mutating func use(_ key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToFront(slot)
        return entries[slot]?.value
    }

    /// Stores `value` under `key` with `cost`, replacing any entry there, as the most recently used entry.
    mutating func set(_ value: Value, cost: Int, for key: Key) {
        if let slot = slots[key] {
            totalCost += cost - links[slot].cost
            links[slot].cost = cost
            entries[slot] = (key, value)
            moveToFront(slot)
            return
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            links[slot] = Link(newer: Self.none, older: Self.none, cost: cost)
            entries[slot] = (key, value)
        } else {
            slot = links.count
            links.append(Link(newer: Self.none, older: Self.none, cost: cost))
            entries.append((key, value))
        }
        slots[key] = slot
        totalCost += cost
        linkAtFront(slot)
    }

    /// Removes the entry stored under `key` and returns its value.
    @discardableResult
    mutating func remove(_ key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        let value = entries[slot]?.value
        unlink(slot)
        totalCost -= links[slot].cost
        entries[slot] = nil
        if slots.isEmpty {
            removeAll()   // gives the arrays' memory back
        } else {
            freeSlots.append(slot)
        }
        return value
    }

    /// Removes the least recently used entry and returns it.
    mutating func removeOldest() -> (key: Key, value: Value)? {
        guard let key = oldestKey, let value = remove(key) else { return nil }
        return (key, value)
    }

    /// Removes every entry whose key satisfies `shouldRemove` and returns their keys and values. O(n).
    @discardableResult
    mutating func removeAll(where shouldRemove: (Key) -> Bool) -> [(key: Key, value: Value)] {
        let doomed = slots.keys.filter(shouldRemove)
        return doomed.compactMap { key in remove(key).map { (key, $0) } }
    }

    /// Removes every entry.
    mutating func removeAll() {
        slots = [:]
        links = []
        entries = []
        freeSlots = []
        newest = Self.none
        oldest = Self.none
        totalCost = 0
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (links[slot].newer, links[slot].older)
        if newer == Self.none { newest = older } else { links[newer].older = older }
        if older == Self.none { oldest = newer } else { links[older].newer = newer }
        links[slot].newer = Self.none
        links[slot].older = Self.none
    }

    private mutating func linkAtFront(_ slot: Int) {
        links[slot].older = newest
        links[slot].newer = Self.none
        if newest == Self.none { oldest = slot } else { links[newest].newer = slot }
        newest = slot
    }
}
