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

    @Test("the heap gives its expiries back earliest first, whatever the order they came in")
    func heapOrder() {
        var heap = ExpiryHeap()
        let keys = (0..<200).map { _ in ObjectIdentifier(Target()) }
        let expiries = (0..<200).map { UInt64(($0 * 7_919) % 200) }
        for (expiry, key) in zip(expiries, keys) { heap.insert(.init(expiry: expiry, key: key)) }
        var out: [UInt64] = []
        while let first = heap.first {
            out.append(first.expiry)
            heap.removeFirst()
        }
        #expect(out == expiries.sorted())
        heap.rebuild(from: zip(expiries, keys).map { .init(expiry: $0, key: $1) })
        #expect(heap.first?.expiry == 0 && heap.count == 200)
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
