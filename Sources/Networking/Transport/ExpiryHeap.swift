/// The expiries ``AttemptWatch`` looks after, earliest first: a binary min-heap, so that a tick looks at
/// one entry when nothing is due instead of every attempt watched (10,000 calls queued under the
/// ``Scheduling`` limits are 10,000 entries).
///
/// Indexed: each target keeps its place in the heap (``PlacedAttempt/watchSlot``), so an attempt that
/// ends leaves the heap at once, in O(log n), and nothing of it is held afterwards (no dictionary of the
/// attempts watched, no stale entry keeping a finished call alive).
struct ExpiryHeap {
    /// One expiry: when, in `DispatchTime.uptimeNanoseconds`, and for which attempt.
    struct Entry {
        let expiry: UInt64
        let target: any PlacedAttempt
    }

    private(set) var entries: [Entry] = []

    /// How many attempts it holds.
    var count: Int { entries.count }

    /// The earliest expiry, if any.
    var first: Entry? { entries.first }

    /// Adds `target`, which is in no heap, with `expiry`.
    mutating func insert(_ target: any PlacedAttempt, expiry: UInt64) {
        entries.append(Entry(expiry: expiry, target: target))
        siftUp(entries.count - 1)
    }

    /// Takes `target` out, if it is in.
    mutating func remove(_ target: any PlacedAttempt) {
        let index = target.watchSlot - 1
        guard index >= 0, index < entries.count, entries[index].target === target else { return }
        let last = entries.count - 1
        if index != last { move(last, to: index) }
        entries.removeLast()
        target.watchSlot = 0
        if index < entries.count {
            siftDown(index)
            siftUp(index)
        }
    }

    /// Takes the earliest out, if any.
    mutating func removeFirst() {
        guard let first = entries.first else { return }
        remove(first.target)
    }

    /// Puts the entry at `from` at `to`, telling its target.
    private mutating func move(_ from: Int, to: Int) {
        entries[to] = entries[from]
        entries[to].target.watchSlot = to + 1
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        let entry = entries[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard entry.expiry < entries[parent].expiry else { break }
            move(parent, to: child)
            child = parent
        }
        entries[child] = entry
        entry.target.watchSlot = child + 1
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let entry = entries[parent]
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = left
            guard left < entries.count else { break }
            if right < entries.count, entries[right].expiry < entries[left].expiry { smallest = right }
            guard entries[smallest].expiry < entry.expiry else { break }
            move(smallest, to: parent)
            parent = smallest
        }
        entries[parent] = entry
        entry.target.watchSlot = parent + 1
    }
}
