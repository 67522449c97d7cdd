extension Outbox {
    /// The mutations of one lane (``Outbox/Lane``), by identity, in sequence order: a deque whose head
    /// leaves in O(1) (a delivery removes its lane's head; a plain array's `remove(at: 0)` made a replay of
    /// n mutations O(n²)). A removal elsewhere (a discard, a damaged record) or an insertion out of order (an
    /// enqueue that finished writing after a later one) is linear, as rare as it is.
    struct LaneQueue {
        private var ids: [String] = []
        /// The index of the head in `ids`: the slots before it are left behind, reclaimed now and then.
        private var start = 0

        /// The identities, head first.
        var all: ArraySlice<String> { ids[start...] }

        /// Whether the lane holds no mutation.
        var isEmpty: Bool { start == ids.count }

        /// Adds `id` at the tail.
        mutating func append(_ id: String) {
            ids.append(id)
        }

        /// Inserts `id` after the last identity for which `isBefore` holds (at the head when none does).
        mutating func insert(_ id: String, after isBefore: (String) -> Bool) {
            let index = ids[start...].lastIndex(where: isBefore).map { $0 + 1 } ?? start
            ids.insert(id, at: index)
        }

        /// Removes `id` (usually the head: O(1)); nothing when the lane does not hold it.
        mutating func remove(_ id: String) {
            guard start < ids.count else { return }
            if ids[start] == id {
                ids[start] = ""   // its string released now
                start += 1
                if start == ids.count {
                    ids.removeAll(keepingCapacity: true)
                    start = 0
                } else if start >= 64, start * 2 >= ids.count {
                    ids.removeFirst(start)   // amortised O(1): only once half of the slots are left behind
                    start = 0
                }
            } else if let index = ids[start...].firstIndex(of: id) {
                ids.remove(at: index)
            }
        }
    }
}
