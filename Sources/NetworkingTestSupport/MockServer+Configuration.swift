import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension MockServer {
    /// A copy of `configuration` whose every request a `NetworkProvider` sends is answered by this server:
    /// for testing the provider the app ships, made by the app's own factory, with all its options.
    ///
    /// The copy keeps everything `configuration` says (its headers, timeouts, cookie policy, …) but its
    /// `protocolClasses`, which list ``MockURLProtocol`` alone (so a request that lost the routing header fails
    /// with `unsupportedURL` instead of reaching the network), and adds this server's routing header
    /// (``MockURLProtocol/serverHeader``) to `httpAdditionalHeaders`. A provider made from it sends that header
    /// with every request it builds, every retry and every redirect hop, whatever its origin, so all of them
    /// reach this server without a routing adapter; it never shows the header to retriers, monitors, loggers
    /// or `Response.request` (adapters do see it: an adapter that signs every header signs it too), and the
    /// server does not record it. An app's factory must add its headers to `httpAdditionalHeaders`, not
    /// replace them, or the routing header is lost.
    ///
    /// Such a provider's requests never reach a TLS server, so its ``ServerTrust`` pins are neither checked
    /// nor fail closed for want of TLS (plain `http` to a pinned host, or a URL without a host, still fails
    /// as in production): the pinned hosts count as answered by the test kit (the provider keeps the pins, and
    /// a provider made from any other configuration enforces them as before; see the Testing guide).
    ///
    /// ```swift
    /// // The app, once:
    /// func makeProvider(configuration: URLSessionConfiguration = .default) -> NetworkProvider {
    ///     NetworkProvider(configuration: configuration, interceptor: auth, cache: cache, serverTrust: trust)
    /// }
    /// // Its tests:
    /// let provider = makeProvider(configuration: server.makeConfiguration(basedOn: .default))
    /// ```
    ///
    /// Each server's configurations route to it alone: tests running in parallel, each with its own server,
    /// never see each other's requests. A raw `URLSession` (not a provider) made from it may not send the
    /// additional headers before the protocol is chosen: route its requests with ``route(_:)``.
    public func makeConfiguration(basedOn configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        // `copy()` of a URLSessionConfiguration is one; the caller's configuration stays as it is.
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? .ephemeral
        copy.protocolClasses = [MockURLProtocol.self]   // alone: a request that lost the routing header is not sent anywhere
        var headers: [AnyHashable: Any] = [:]
        for (name, value) in copy.httpAdditionalHeaders ?? [:]
        where "\(name)".caseInsensitiveCompare(MockURLProtocol.serverHeader) != .orderedSame {
            headers[name] = value
        }
        headers[MockURLProtocol.serverHeader] = id
        copy.httpAdditionalHeaders = headers
        return copy
    }
}
