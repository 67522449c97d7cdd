import Foundation

/// The lines of failed attempts a ``NetworkLogger`` has not written yet, per call, and the last redirect
/// each call followed: held until the call goes on (written) or ends (written or dropped, see
/// ``NetworkLogger/Verbosity``). At most ``capacity`` calls are held: past it, the oldest call's are
/// dropped, so a logger that is never told a call ended (a monitor wrapping it that filters
/// `requestDidFinish`) does not grow without bound.
final class HeldAttemptLines: @unchecked Sendable {
    // @unchecked: `held` and `sequence` are guarded by `lock`.

    /// One failed attempt's lines.
    struct Attempt {
        /// Its line, and in verbose mode its request's and response's.
        let lines: [String]
        /// Whether its line says more than the call's line would: its error is no ``NetworkError``.
        let saysMore: Bool
    }

    /// What is held for one call; its context is kept so that its identifier is not reused meanwhile.
    private struct Call {
        let context: RequestContext
        /// When the call was first held, to find the oldest.
        let sequence: UInt64
        var attempts: [Attempt] = []
        var lastHop: RedirectHop?
    }

    /// How many calls may be held at once.
    let capacity: Int
    private let lock = NSLock()
    private var held: [ObjectIdentifier: Call] = [:]
    private var sequence: UInt64 = 0

    init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    /// How many calls are held.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return held.count
    }

    func hold(_ attempt: Attempt, for context: RequestContext) {
        update(context) { $0.attempts.append(attempt) }
    }

    /// Notes the redirect the call followed last.
    func noteHop(_ hop: RedirectHop, for context: RequestContext) {
        update(context) { $0.lastHop = hop }
    }

    /// The last redirect the call followed during `attempt`, if any.
    func lastHop(of attempt: Int, for context: RequestContext) -> RedirectHop? {
        lock.lock()
        defer { lock.unlock() }
        return held[ObjectIdentifier(context)]?.lastHop.flatMap { $0.attempt == attempt ? $0 : nil }
    }

    /// The attempts held for `context`, which are no longer held (nor its last redirect).
    func take(for context: RequestContext) -> [Attempt] {
        lock.lock()
        defer { lock.unlock() }
        return held.removeValue(forKey: ObjectIdentifier(context))?.attempts ?? []
    }

    private func update(_ context: RequestContext, _ change: (inout Call) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(context)
        var call: Call
        if let existing = held[key] {
            call = existing
        } else {
            if held.count >= capacity, let oldest = held.min(by: { $0.value.sequence < $1.value.sequence })?.key {
                held.removeValue(forKey: oldest)   // a call whose end was never told: its lines are dropped
            }
            sequence += 1
            call = Call(context: context, sequence: sequence)
        }
        change(&call)
        held[key] = call
    }
}
