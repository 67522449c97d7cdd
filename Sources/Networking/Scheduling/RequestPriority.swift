import Foundation

/// How urgent a call is: a provider's queue sends higher priorities first, in arrival order within one
/// priority, and passes the priority on to the session's task.
public enum RequestPriority: Int, Sendable, Comparable, CaseIterable {
    /// Work the user is not waiting for: prefetching, analytics.
    case low
    /// The default.
    case normal
    /// Work the user is waiting for right now.
    case high

    /// Orders priorities from ``low`` to ``high``.
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
