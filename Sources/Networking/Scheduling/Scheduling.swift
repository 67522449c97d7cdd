import Foundation

/// How a provider schedules its calls: how many it sends at once, to all hosts and to one host, and
/// whether identical concurrent `GET`/`HEAD` calls share one exchange.
///
/// ```swift
/// let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 4))
/// ```
public struct Scheduling: Sendable, Equatable {
    /// The default provider-wide limit on requests in flight at once.
    public static let defaultMaximumCalls = 64
    /// The default limit on requests in flight at once to one host (scheme, host and port).
    public static let defaultMaximumCallsPerHost = 6

    /// The scheduling a provider uses unless it is given another: ``defaultMaximumCalls`` in all,
    /// ``defaultMaximumCallsPerHost`` per host, identical calls shared.
    public static let `default` = Scheduling()

    /// At most this many requests are in flight at once, to all hosts together (at least 1).
    public var maximumCalls: Int
    /// At most this many requests are in flight at once to one host (at least 1).
    public var maximumCallsPerHost: Int
    /// Whether concurrent identical `GET`/`HEAD` calls share one exchange, unless an endpoint says
    /// otherwise (``Endpoint/coalescesIdenticalCalls``).
    public var coalescesIdenticalCalls: Bool

    /// Creates a scheduling.
    ///
    /// - Parameters:
    ///   - maximumCalls: the provider-wide limit on requests in flight; ``defaultMaximumCalls``.
    ///   - maximumCallsPerHost: the limit per host; ``defaultMaximumCallsPerHost``.
    ///   - coalescesIdenticalCalls: whether identical concurrent `GET`/`HEAD` calls share one exchange.
    public init(
        maximumCalls: Int = Scheduling.defaultMaximumCalls,
        maximumCallsPerHost: Int = Scheduling.defaultMaximumCallsPerHost,
        coalescesIdenticalCalls: Bool = true
    ) {
        self.maximumCalls = max(1, maximumCalls)
        self.maximumCallsPerHost = max(1, maximumCallsPerHost)
        self.coalescesIdenticalCalls = coalescesIdenticalCalls
    }
}
