import Dispatch
import Foundation

/// The overall deadline of one call: every attempt, every retry delay and every redirect of the call
/// must end before it. URLSession's own timeouts cannot do this on Linux: `timeoutIntervalForRequest`
/// is an idle timeout that a server trickling a byte every half second never trips, and
/// `timeoutIntervalForResource` is ignored there for such a body.
///
/// - An attempt still running when the deadline passes is cancelled (by the provider's
///   ``AttemptWatch``, at most a tenth of a second late), and one is not started after it.
/// - It is checked again after the interceptors adapted a request (they may have waited for a token
///   refresh, whose own call has its own deadline: a call can overrun its deadline by that wait).
/// - A retry is not started after the deadline, and a retry delay that would end after it is not
///   waited for: the call ends at once.
/// - Either way the call throws ``NetworkError/deadlineExceeded(seconds:)``.
struct Deadline: Sendable {
    /// The call's allowance in seconds (`.infinity` for none).
    let seconds: TimeInterval
    /// When the call must end; `nil` for no deadline.
    let expiry: DispatchTime?

    /// A deadline `seconds` from now. Throws ``NetworkError/invalidRequest(field:reason:)`` for zero,
    /// a negative value or NaN; `.infinity` (or more than ten years) means none.
    init(seconds: TimeInterval) throws {
        guard seconds > 0 else {   // also NaN
            throw NetworkError.invalidRequest(field: "deadline", reason: "must be a positive number of seconds")
        }
        self.seconds = seconds
        if seconds < 315_360_000 {
            expiry = DispatchTime.now() + .nanoseconds(Int(seconds * 1_000_000_000))
        } else {
            expiry = nil
        }
    }

    /// The error a call that ran out of time throws.
    var exceeded: NetworkError { .deadlineExceeded(seconds: seconds) }

    /// Whether the deadline has passed.
    var hasPassed: Bool {
        guard let expiry else { return false }
        return DispatchTime.now() >= expiry
    }

    /// The nanoseconds left before the deadline (0 once it passed); `nil` for no deadline.
    var remainingNanoseconds: UInt64? {
        guard let expiry else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        return expiry.uptimeNanoseconds > now ? expiry.uptimeNanoseconds - now : 0
    }

    /// Whether waiting `delay` seconds from now still ends before the deadline.
    func allows(delay: TimeInterval) -> Bool {
        guard let expiry, delay > 0 else { return true }
        let remaining = Double(expiry.uptimeNanoseconds) - Double(DispatchTime.now().uptimeNanoseconds)
        return delay * 1_000_000_000 < remaining
    }
}
