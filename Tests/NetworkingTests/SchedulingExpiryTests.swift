import Dispatch
import Foundation
import Testing

@testable import Networking

/// Issue 33, part 3: 10,000 calls queued under the limits are 10,000 deadlines watched. The watch keeps
/// them earliest first, so a tick with nothing due costs one look, and each expires in its turn.
@Suite("Scheduling: the deadlines of queued calls, watched earliest first", SuiteTimeLimit.oneMinute)
struct SchedulingExpiryTests {
    /// Notes that it expired.
    final class Target: WatchedAttempt, @unchecked Sendable {
        // @unchecked: `expired` is guarded by `lock`.
        private let lock = NSLock()
        private var count = 0
        var watchSlot = 0
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
        for target in kept { watch.watch(target, until: far) }
        weak var gone: Target?
        do {
            let target = Target()
            gone = target
            watch.watch(target, until: far)
            watch.watch(target, until: far + 1)   // watched again: one entry still
            watch.unwatch(target)
        }
        #expect(gone == nil)
        #expect(kept.allSatisfy { $0.watchSlot != 0 })
        for target in kept { watch.unwatch(target) }
        #expect(kept.allSatisfy { $0.watchSlot == 0 })
    }

    @Test("among 10,000 watched, the one whose deadline passed expires; those unwatched or watched again later never expire early")
    func dueOnesExpire() async {
        let watch = AttemptWatch()
        let far = DispatchTime.now() + 3_600
        let waiting = (0..<10_000).map { _ in Target() }
        for target in waiting { watch.watch(target, until: far) }
        let due = Target()
        let unwatched = Target()
        let rewatched = Target()
        watch.watch(due, until: .now())
        watch.watch(unwatched, until: .now())
        watch.watch(rewatched, until: .now())
        watch.unwatch(unwatched)
        watch.watch(rewatched, until: far)   // its new expiry counts, not the first
        await pollUntil { due.expired == 1 }
        let later = Target()
        watch.watch(later, until: .now())
        await pollUntil { later.expired == 1 }   // a tick after the first: the stale entries are gone by now
        #expect(unwatched.expired == 0 && rewatched.expired == 0 && due.expired == 1)
        #expect(waiting.allSatisfy { $0.expired == 0 })
        for target in waiting { watch.unwatch(target) }
        watch.unwatch(rewatched)
    }
}
