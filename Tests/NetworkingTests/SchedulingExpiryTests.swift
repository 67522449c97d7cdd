import Dispatch
import Foundation
import Testing

@testable import Networking

/// Issue 33, part 3: 10,000 calls queued under the limits are 10,000 deadlines watched. The watch keeps
/// them earliest first, so a tick with nothing due costs one look, and each expires in its turn.
@Suite("Scheduling: the deadlines of queued calls, watched earliest first", SuiteTimeLimit.oneMinute)
struct SchedulingExpiryTests {
    /// Notes that it expired, and keeps no place of its own in a watch's heap.
    class Unplaced: WatchedAttempt, @unchecked Sendable {
        // @unchecked: `count` is guarded by `lock`.
        private let lock = NSLock()
        private var count = 0
        var expired: Int {
            lock.lock()
            defer { lock.unlock() }
            return count
        }
        func expire() {
            lock.lock()
            count += 1
            lock.unlock()
        }
    }

    /// Notes that it expired, and keeps its place in its watch's heap.
    final class Target: Unplaced, PlacedAttempt, @unchecked Sendable {
        // @unchecked: `watchSlot` is guarded by the lock of the watch that watches it.
        var watchSlot = 0
    }

    @Test("the heap gives its expiries back earliest first, whatever the order they came in, and lets any of them go at once")
    func heapOrder() {
        var heap = ExpiryHeap()
        let expiries = (0..<200).map { UInt64(($0 * 7_919) % 200) }
        let targets = expiries.map { _ in Target() }
        for (target, expiry) in zip(targets, expiries) { heap.insert(target, expiry: expiry) }
        #expect(targets.allSatisfy { $0.watchSlot != 0 })
        for (target, expiry) in zip(targets, expiries) where expiry % 2 == 1 { heap.remove(target) }   // from anywhere in it
        heap.remove(Target())   // one it never held: nothing happens
        #expect(heap.count == 100)
        var out: [UInt64] = []
        while let first = heap.first {
            out.append(first.expiry)
            heap.removeFirst()
            #expect(first.target.watchSlot == 0)
        }
        #expect(out == expiries.filter { $0 % 2 == 0 }.sorted())
        #expect(targets.allSatisfy { $0.watchSlot == 0 })
    }

    @Test("an attempt that ends is let go at once: the watch keeps no dictionary of its attempts, and no stale entry")
    func unwatchedAreLetGo() {
        let watch = AttemptWatch()
        let far = DispatchTime.now() + 3_600
        let kept = (0..<10).map { _ in Target() }
        for target in kept { watch.watch(placed: target, until: far) }
        weak var gone: Target?
        do {
            let target = Target()
            gone = target
            watch.watch(placed: target, until: far)
            watch.watch(placed: target, until: far + 1)   // watched again: one entry still
            watch.unwatch(placed: target)
        }
        #expect(gone == nil)
        #expect(kept.allSatisfy { $0.watchSlot != 0 })
        for target in kept { watch.unwatch(placed: target) }
        #expect(kept.allSatisfy { $0.watchSlot == 0 })
    }

    @Test("among 10,000 watched, the one whose deadline passed expires; those unwatched or watched again later never expire early")
    func dueOnesExpire() async {
        let watch = AttemptWatch()
        let far = DispatchTime.now() + 3_600
        let waiting = (0..<10_000).map { _ in Target() }
        for target in waiting { watch.watch(placed: target, until: far) }
        let due = Target()
        let unwatched = Target()
        let rewatched = Target()
        watch.watch(placed: due, until: .now())
        watch.watch(placed: unwatched, until: .now())
        watch.watch(placed: rewatched, until: .now())
        watch.unwatch(placed: unwatched)
        watch.watch(placed: rewatched, until: far)   // its new expiry counts, not the first
        await pollUntil { due.expired == 1 }
        let later = Target()
        watch.watch(placed: later, until: .now())
        await pollUntil { later.expired == 1 }   // a tick after the first: the stale entries are gone by now
        #expect(unwatched.expired == 0 && rewatched.expired == 0 && due.expired == 1)
        #expect(waiting.allSatisfy { $0.expired == 0 })
        for target in waiting { watch.unwatch(placed: target) }
        watch.unwatch(placed: rewatched)
    }

    @Test("a target that keeps no place of its own is watched all the same (a box keeps its place): it expires when due, not once unwatched")
    func unplacedTargets() async {
        let watch = AttemptWatch()
        let due = Unplaced()
        let unwatched = Unplaced()
        let rewatched = Unplaced()
        watch.watch(due, until: .now())
        watch.watch(unwatched, until: .now())
        watch.unwatch(unwatched)
        watch.watch(rewatched, until: .now())
        watch.watch(rewatched, until: .now() + 3_600)   // its new expiry counts, not the first
        await pollUntil { due.expired == 1 }
        let later = Unplaced()
        watch.watch(later, until: .now())
        await pollUntil { later.expired == 1 }
        #expect(due.expired == 1 && unwatched.expired == 0 && rewatched.expired == 0)
        watch.unwatch(rewatched)
        watch.unwatch(due)   // already expired: nothing happens
    }
}
