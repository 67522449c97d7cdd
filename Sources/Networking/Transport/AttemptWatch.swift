import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Watches the provider's running attempts with one timer for all of them: cancels those whose deadline
/// passed.
///
/// A timer source per attempt cost 9,100 instructions a request (a fifth of the provider's whole
/// overhead over raw URLSession); here an attempt costs a lock and a heap insert (``ExpiryHeap``): an
/// attempt keeps its place in the heap itself (``PlacedAttempt/watchSlot``), so the watch needs no
/// dictionary of them (a slot of one cost a queued call 66 bytes), and one that ends leaves the heap at once. The timer ticks every ``tick`` while attempts are watched, so a deadline
/// is enforced at most that late, and stops after ``idleTicksBeforeStopping`` ticks with nothing to watch
/// (no wake-ups for an idle app). A tick with nothing due looks at the earliest expiry only, however
/// many attempts are watched (calls queued under the ``Scheduling`` limits are watched too).
/// `package`: the test kit's mock times out its loads with one too.
package final class AttemptWatch: @unchecked Sendable {
    // @unchecked: `expiries`, `boxes`, `timer`, `idleTicks` and the targets' `watchSlot` are guarded by `lock`.

    /// How often the watched attempts are checked: 0.1 s.
    static let tick = DispatchTimeInterval.milliseconds(100)
    /// Ticks with nothing watched before the timer stops: 1 s.
    static let idleTicksBeforeStopping = 10

    /// What the watch looks after: an attempt's task handle.
    package typealias Watched = AnyObject & Sendable & WatchedAttempt

    private let lock = NSLock()
    /// The targets watched, earliest expiry first.
    private var expiries = ExpiryHeap()
    /// The place of each target watched through ``watch(_:until:)`` (one that keeps no place of its own).
    private var boxes: [ObjectIdentifier: PlacedBox] = [:]
    private var timer: DispatchSourceTimer?
    private var idleTicks = 0

    package init() {}

    deinit {
        timer?.cancel()
    }

    /// Calls `target.expire()` once `expiry` has passed, unless ``unwatch(placed:)`` came first. Without an
    /// expiry (no deadline) there is nothing to watch.
    package func watch(placed target: any PlacedAttempt, until expiry: DispatchTime?) {
        guard let expiry else { return }
        lock.lock()
        defer { lock.unlock() }
        place(target, until: expiry)
    }

    /// Stops watching `target` (its attempt ended).
    package func unwatch(placed target: any PlacedAttempt) {
        lock.lock()
        defer { lock.unlock() }
        expiries.remove(target)
    }

    /// ``watch(placed:until:)`` for a target that keeps no place of its own: a box keeps it, found by the
    /// target's identity (a dictionary look-up more each way).
    package func watch(_ target: any Watched, until expiry: DispatchTime?) {
        guard let expiry else { return }
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(target)
        let box = boxes[key] ?? PlacedBox(target)
        boxes[key] = box
        place(box, until: expiry)
    }

    /// Stops watching a target watched through ``watch(_:until:)``.
    package func unwatch(_ target: any Watched) {
        lock.lock()
        defer { lock.unlock() }
        if let box = boxes.removeValue(forKey: ObjectIdentifier(target)) { expiries.remove(box) }
    }

    /// Puts `target` in the heap with `expiry` (watched again: its new expiry counts). Call with `lock` held.
    private func place(_ target: any PlacedAttempt, until expiry: DispatchTime) {
        expiries.remove(target)
        expiries.insert(target, expiry: expiry.uptimeNanoseconds)
        idleTicks = 0
        if timer == nil { startTimer() }
    }

    /// Call with `lock` held.
    private func startTimer() {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + Self.tick, repeating: Self.tick, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
        self.timer = timer
    }

    private func check() {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        var due: [any PlacedAttempt] = []
        while let first = expiries.first, first.expiry <= now {
            expiries.removeFirst()
            due.append(first.target)
            if let box = first.target as? PlacedBox { boxes[ObjectIdentifier(box.target)] = nil }
        }
        if expiries.count == 0 {
            idleTicks += 1
            if idleTicks >= Self.idleTicksBeforeStopping {
                timer?.cancel()
                timer = nil
                idleTicks = 0
            }
        }
        lock.unlock()
        for target in due { target.expire() }
    }
}

/// What ``AttemptWatch`` looks after.
package protocol WatchedAttempt {
    /// The deadline passed: stop the work.
    func expire()
}

/// A ``WatchedAttempt`` that keeps its place in the heap of the ``AttemptWatch`` that watches it
/// (``AttemptWatch/watch(placed:until:)``): the watch then needs no dictionary of its attempts.
package protocol PlacedAttempt: AnyObject, Sendable, WatchedAttempt {
    /// Its place in its watch's heap plus one, 0 while it is not watched: kept by the ``AttemptWatch`` that
    /// watches it, under that watch's lock (a target is watched by one watch).
    var watchSlot: Int { get set }
}

/// The place of a target watched through ``AttemptWatch/watch(_:until:)``, which keeps none of its own.
private final class PlacedBox: PlacedAttempt, @unchecked Sendable {
    // @unchecked: `watchSlot` is guarded by the lock of the watch that made it.
    let target: any AttemptWatch.Watched
    var watchSlot = 0

    init(_ target: any AttemptWatch.Watched) {
        self.target = target
    }

    func expire() {
        target.expire()
    }
}
