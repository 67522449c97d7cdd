import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Removes credentials from a redirected request when the redirect leaves the original origin.
///
/// When scheme, host or port change, `Authorization`, `Cookie` and `Proxy-Authorization` are removed
/// before the redirect is followed (as OkHttp does). Linux URLSession would otherwise forward
/// `Authorization: Bearer ...` to the new host.
enum RedirectPolicy {
    /// The header fields that carry credentials.
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// The request to follow for a redirect from `original` to `redirect`.
    static func request(_ redirect: URLRequest, redirectedFrom original: URLRequest?) -> URLRequest {
        guard let from = original?.url, let to = redirect.url, Origin(from) != Origin(to) else {
            return redirect
        }
        var stripped = redirect
        for name in credentialHeaders {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return stripped
    }
}

/// The provider's session delegate: on Linux only a session delegate (not a per-task one) is told
/// about redirects.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: the delegate holds no state.

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectPolicy.request(request, redirectedFrom: task.currentRequest ?? task.originalRequest))
    }
}
