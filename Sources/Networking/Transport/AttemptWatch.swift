import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Watches the provider's running attempts with one timer for all of them: cancels those whose deadline
/// passed.
///
/// A timer source per attempt cost 9,100 instructions a request (a fifth of the provider's whole
/// overhead over raw URLSession); here an attempt costs a lock and a dictionary insert and removal. The
/// timer ticks every ``tick`` while attempts are watched, so a deadline is enforced at most that late,
/// and stops after ``idleTicksBeforeStopping`` ticks with nothing to watch (no wake-ups for an idle app).
/// `package`: the test kit's mock times out its loads with one too.
package final class AttemptWatch: @unchecked Sendable {
    // @unchecked: `watched`, `timer` and `idleTicks` are guarded by `lock`.

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
        watched[ObjectIdentifier(target)] = Entry(expiry: expiry.uptimeNanoseconds, target: target)
        idleTicks = 0
        if timer == nil { startTimer() }
    }

    /// Stops watching `target` (its attempt ended).
    package func unwatch(_ target: any Watched) {
        lock.lock()
        defer { lock.unlock() }
        watched[ObjectIdentifier(target)] = nil
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
        let due = watched.filter { $0.value.expiry <= now }
        for key in due.keys { watched[key] = nil }
        if watched.isEmpty {
            idleTicks += 1
            if idleTicks >= Self.idleTicksBeforeStopping {
                timer?.cancel()
                timer = nil
                idleTicks = 0
            }
        }
        lock.unlock()
        for entry in due.values { entry.target.expire() }
    }
}

/// What ``AttemptWatch`` looks after.
package protocol WatchedAttempt {
    /// The deadline passed: stop the work.
    func expire()
}
