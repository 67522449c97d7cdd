/// The expiries ``AttemptWatch`` looks after, earliest first: a binary min-heap, so that a tick looks at
/// one entry when nothing is due instead of every attempt watched (10,000 calls queued under the
/// ``Scheduling`` limits are 10,000 entries).
///
/// An entry may outlive its attempt (unwatched): the watch drops it when it reaches the top, and rebuilds
/// the heap from the attempts still watched when the stale entries outnumber them.
struct ExpiryHeap {
    /// One expiry: when, in `DispatchTime.uptimeNanoseconds`, and for which attempt.
    struct Entry {
        let expiry: UInt64
        let key: ObjectIdentifier
    }

    private(set) var entries: [Entry] = []

    /// How many entries it holds, stale ones included.
    var count: Int { entries.count }

    /// The earliest expiry, if any.
    var first: Entry? { entries.first }

    /// Adds `entry`: O(log n).
    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].expiry < entries[parent].expiry else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the earliest expiry: O(log n).
    mutating func removeFirst() {
        guard !entries.isEmpty else { return }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].expiry < entries[smallest].expiry { smallest = left }
            if right < entries.count, entries[right].expiry < entries[smallest].expiry { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Replaces the entries with `newEntries`: O(n log n), amortised over the removals that made it due.
    mutating func rebuild(from newEntries: [Entry]) {
        entries = []
        entries.reserveCapacity(newEntries.count)
        for entry in newEntries.sorted(by: { $0.expiry < $1.expiry }) { entries.append(entry) }   // a sorted array is a heap
    }

    /// Removes every entry, keeping the storage.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }
}
