import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Changes a request just before each attempt is sent: adds a token, a header, a signature.
///
/// Every attempt is adapted from the request as the endpoint built it, never from the previous
/// attempt's adapted copy, so what an adapter adds is replaced on a retry instead of stacked.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send. Throwing fails the attempt with that error (the retriers are then asked).
    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest
}
