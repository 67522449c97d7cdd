import Foundation

/// How many token refreshes an ``AuthInterceptor`` allows in a span of time before it treats them as
/// a server or clock bug and stops with ``NetworkError/excessiveRefresh(count:window:)``.
public struct RefreshWindow: Hashable, Sendable {
    /// The span of time, in seconds.
    public var interval: TimeInterval
    /// The most refreshes allowed within ``interval``.
    public var maximumCount: Int

    /// Creates a window; the default allows 5 refreshes in 30 seconds (as Alamofire does).
    ///
    /// `interval` may be `.infinity` ("at most `maximumCount` refreshes per launch"); a negative or NaN
    /// interval counts as 0, which limits nothing. A negative `maximumCount` counts as 0: no refresh.
    ///
    /// ```swift
    /// RefreshWindow(interval: .infinity, maximumCount: 1)   // one refresh per launch
    /// ```
    public init(interval: TimeInterval = 30, maximumCount: Int = 5) {
        self.interval = interval.isNaN ? 0 : max(interval, 0)
        self.maximumCount = max(maximumCount, 0)
    }
}
