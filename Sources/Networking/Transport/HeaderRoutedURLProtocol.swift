import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `URLProtocol` that routes each request by a header of its own: package plumbing for the test
/// kit's `MockURLProtocol`, whose header names the mock server a request is for. Nothing in an app
/// conforms to it.
///
/// A provider whose session configuration lists such a protocol in its `protocolClasses` sends that
/// header to every redirect hop, whatever its origin (so a redirect through the mock reaches the same
/// server), and never shows it: not to monitors, retriers or `Response.request` (see ``HiddenHeaders``).
/// It is a setting of that one provider, read from its own configuration: no other provider keeps or
/// hides a header of that name.
package protocol HeaderRoutedURLProtocol: AnyObject {
    /// The name of the header the protocol routes requests by.
    static var routingHeader: String { get }
}

enum RoutingHeaders {
    /// The routing headers (lower-cased) of the ``HeaderRoutedURLProtocol``s `configuration` sends through:
    /// empty in an app.
    static func names(in configuration: URLSessionConfiguration) -> Set<String> {
        var names: Set<String> = []
        for type in configuration.protocolClasses ?? [] {
            if let routed = type as? any HeaderRoutedURLProtocol.Type { names.insert(routed.routingHeader.lowercased()) }
        }
        return names
    }

    /// Whether every protocol class `configuration` lists is a ``HeaderRoutedURLProtocol`` (and it lists one).
    static func sendsOnlyThroughRoutedProtocols(_ configuration: URLSessionConfiguration) -> Bool {
        let classes = configuration.protocolClasses ?? []
        return !classes.isEmpty && classes.allSatisfy { $0 is any HeaderRoutedURLProtocol.Type }
    }
}
