import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Watches the provider's running attempts with one timer for all of them: cancels those whose deadline
/// passed.
///
/// A timer source per attempt cost 9,100 instructions a request (a fifth of the provider's whole
/// overhead over raw URLSession); here an attempt costs a lock, a dictionary insert and removal and a
/// heap insert (``ExpiryHeap``). The timer ticks every ``tick`` while attempts are watched, so a deadline
/// is enforced at most that late, and stops after ``idleTicksBeforeStopping`` ticks with nothing to watch
/// (no wake-ups for an idle app). A tick with nothing due looks at the earliest expiry only, however
/// many attempts are watched (calls queued under the ``Scheduling`` limits are watched too).
/// `package`: the test kit's mock times out its loads with one too.
package final class AttemptWatch: @unchecked Sendable {
    // @unchecked: `watched`, `expiries`, `timer` and `idleTicks` are guarded by `lock`.

    /// How often the watched attempts are checked: 0.1 s.
    static let tick = DispatchTimeInterval.milliseconds(100)
    /// Ticks with nothing watched before the timer stops: 1 s.
    static let idleTicksBeforeStopping = 10

    /// What the watch looks after: an attempt's task handle.
    package typealias Watched = AnyObject & Sendable & WatchedAttempt

    private struct Entry {
        let expiry: UInt64
        let target: any Watched
    }

    private let lock = NSLock()
    private var watched: [ObjectIdentifier: Entry] = [:]
    /// The expiries of `watched`, earliest first, and of some attempts no longer watched (dropped lazily).
    private var expiries = ExpiryHeap()
    private var timer: DispatchSourceTimer?
    private var idleTicks = 0

    package init() {}

    deinit {
        timer?.cancel()
    }

    /// Calls `target.expire()` once `expiry` has passed, unless ``unwatch(_:)`` came first. Without an
    /// expiry (no deadline) there is nothing to watch.
    package func watch(_ target: any Watched, until expiry: DispatchTime?) {
        guard let expiry else { return }
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(target)
        watched[key] = Entry(expiry: expiry.uptimeNanoseconds, target: target)
        if expiries.count >= 64, expiries.count > 2 * watched.count {   // mostly unwatched: amortised O(log n)
            expiries.rebuild(from: watched.map { ExpiryHeap.Entry(expiry: $0.value.expiry, key: $0.key) })
        } else {
            expiries.insert(ExpiryHeap.Entry(expiry: expiry.uptimeNanoseconds, key: key))
        }
        idleTicks = 0
        if timer == nil { startTimer() }
    }

    /// Stops watching `target` (its attempt ended).
    package func unwatch(_ target: any Watched) {
        lock.lock()
        defer { lock.unlock() }
        watched[ObjectIdentifier(target)] = nil
        if watched.isEmpty { expiries.removeAll() }
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
        var due: [any Watched] = []
        while let first = expiries.first, first.expiry <= now {
            expiries.removeFirst()
            // Still watched with this expiry (not an attempt that ended, nor one watched again since).
            if let entry = watched[first.key], entry.expiry == first.expiry {
                watched[first.key] = nil
                due.append(entry.target)
            }
        }
        if watched.isEmpty {
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
