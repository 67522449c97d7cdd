import Foundation

/// How a provider schedules its calls: how many it sends at once, to all hosts and to one host, and
/// whether identical concurrent `GET`/`HEAD` calls share one exchange.
///
/// ```swift
/// let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 4))
/// ```
public struct Scheduling: Sendable, Equatable {
    /// The default provider-wide limit on requests in flight at once: 64, OkHttp's figure. Ten hosts at
    /// their full ``defaultMaximumCallsPerHost``, which no phone's radio is short of, while a burst (a sync
    /// of thousands of records, a grid of thumbnails) stays bounded in memory and in what it asks of the
    /// device and the servers at once. See Docs/Scheduling.md, "The defaults, and why".
    public static let defaultMaximumCalls = 64
    /// The default limit on requests in flight at once to one host (scheme, host and port): 6, what every
    /// browser opens to one host over HTTP/1.1 and URLSession's own `httpMaximumConnectionsPerHost` on macOS
    /// (OkHttp allows 5, AsyncHTTPClient 8). The provider's session opens at least ``maximumCallsPerHost``
    /// connections to a host (it raises a lower `httpMaximumConnectionsPerHost`, such as iOS's 4 for
    /// HTTP/1.1), so a request it hands over finds a connection at once instead of queueing again inside
    /// URLSession, where its idle timeout would run. Raise it for an API that speaks HTTP/2 or HTTP/3,
    /// whose one connection carries many requests at once.
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
