import Foundation

/// One origin's share of the ``CallSlots``: its requests in flight and its calls waiting, a first-in
/// first-out line per ``RequestPriority``.
final class HostLine: @unchecked Sendable {
    // @unchecked: every `var` is guarded by the lock of the ``CallSlots`` that made it.

    /// The origin's requests holding a slot.
    var inFlight = 0
    /// The calls waiting, not counting those that left.
    private(set) var waiting = 0
    /// Those that left (cancelled, or their deadline passed) but are still in `lines`, dropped when they
    /// reach a head or all at once when they outnumber the living.
    private var left = 0
    /// A line per priority, `RequestPriority.rawValue` its index: waiters from `heads[i]` on.
    private var lines: [[SlotWaiter]] = [[], [], []]
    private var heads = [0, 0, 0]

    /// Whether nothing of this origin is in flight or waiting.
    var isIdle: Bool { inFlight == 0 && waiting == 0 }

    /// Queues `waiter` in its priority's line, by arrival: at the end, unless it is a later exchange of a
    /// call that arrived before some of those waiting (a redirect hop, a retry, a resend after a refresh),
    /// which goes before them. A line is in arrival order, so the place is found by bisection: a storm's
    /// resends, each placed before the first sends still waiting, would otherwise walk the line one by one.
    func append(_ waiter: SlotWaiter) {
        let index = waiter.priority.rawValue
        var position = lines[index].count
        if position > heads[index], lines[index][position - 1].arrival > waiter.arrival {
            var low = heads[index]   // the first waiter that arrived after it, in heads[index]..<count
            while low < position {
                let middle = low + (position - low) / 2
                if lines[index][middle].arrival > waiter.arrival { position = middle } else { low = middle + 1 }
            }
        }
        if position == lines[index].count {
            lines[index].append(waiter)
        } else {
            lines[index].insert(waiter, at: position)
        }
        waiting += 1
    }

    /// The first waiter of the highest priority that has one.
    var first: SlotWaiter? {
        guard waiting > 0 else { return nil }
        for index in stride(from: lines.count - 1, through: 0, by: -1) {
            while heads[index] < lines[index].count {
                let head = lines[index][heads[index]]
                if case .queued = head.state { return head }
                dropHead(index)   // one that left
                left -= 1
            }
        }
        return nil
    }

    /// Takes `waiter`, which ``first`` returned, off its line.
    func removeFirst(_ waiter: SlotWaiter) {
        dropHead(waiter.priority.rawValue)
        waiting -= 1
        if waiting == 0 { clear() }
    }

    /// Counts `waiter` as gone (it left the queue); it stays in its line until it reaches the head, or
    /// until those who left outnumber those waiting.
    func remove(_ waiter: SlotWaiter) {
        waiting -= 1
        left += 1
        if waiting == 0 {
            clear()
        } else if left > 32, left > waiting {
            for index in lines.indices {
                lines[index] = lines[index][heads[index]...].filter { if case .queued = $0.state { true } else { false } }
                heads[index] = 0
            }
            left = 0
        }
    }

    private func dropHead(_ index: Int) {
        // The waiter is let go at once, not when the line is compacted: a shared exchange waits itself
        // (``SharedTransfer``), and holds its request, its call and its answer.
        lines[index][heads[index]] = Self.passed
        heads[index] += 1
        if heads[index] == lines[index].count {
            lines[index].removeAll(keepingCapacity: true)
            heads[index] = 0
        } else if heads[index] >= 64, heads[index] * 2 >= lines[index].count {   // amortised O(1)
            lines[index].removeFirst(heads[index])
            heads[index] = 0
        }
    }

    /// What is left in a line where a waiter was: one that passed its head.
    private static let passed = SlotWaiter(priority: .normal, slots: CallSlots(Scheduling()), deadlineSeconds: 0)

    private func clear() {
        for index in lines.indices {
            lines[index].removeAll()
            heads[index] = 0
        }
        left = 0
    }
}
