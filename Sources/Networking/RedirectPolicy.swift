import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Removes credentials from a redirected request when the redirect leaves the original origin.
///
/// When scheme, host or port change, `Authorization`, `Cookie` and `Proxy-Authorization` are removed
/// before the redirect is followed (as OkHttp does), and so is every header the interceptors added,
/// since an adapter may put a token in a header of its own (`accessToken: ...`). Linux URLSession
/// would otherwise forward them all to the new host.
enum RedirectPolicy {
    /// The header fields that carry credentials.
    static let credentialHeaders: Set<String> = ["Authorization", "Cookie", "Proxy-Authorization"]

    /// The request to follow for a redirect from `original` to `redirect`; `adaptedHeaders` are the
    /// names of the headers the interceptors added or changed.
    static func request(_ redirect: URLRequest, redirectedFrom original: URLRequest?, adaptedHeaders: Set<String> = []) -> URLRequest {
        guard let from = original?.url, let to = redirect.url, Origin(from) != Origin(to) else {
            return redirect
        }
        var stripped = redirect
        for name in credentialHeaders.union(adaptedHeaders) {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return stripped
    }

    /// The names of the headers `adapted` has that `built` did not have, or has with another value.
    static func headersAdded(by adapted: URLRequest, to built: URLRequest) -> Set<String> {
        guard let fields = adapted.allHTTPHeaderFields else { return [] }
        var names: Set<String> = []
        for (name, value) in fields where built.value(forHTTPHeaderField: name) != value {
            names.insert(name)
        }
        return names
    }
}

/// The provider's session delegate: on Linux only a session delegate (not a per-task one) is told
/// about redirects.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `builtRequests` is guarded by `lock`.
    private let lock = NSLock()
    private var builtRequests: [Int: URLRequest] = [:]

    /// Remembers the request `task` sends as the endpoint built it (before the interceptors adapted
    /// it), until ``forget(_:)``. Which headers were added is worked out only if a redirect happens.
    func remember(builtRequest: URLRequest, for task: URLSessionTask) {
        lock.lock(); defer { lock.unlock() }
        builtRequests[task.taskIdentifier] = builtRequest
    }

    func forget(_ task: URLSessionTask) {
        lock.lock(); defer { lock.unlock() }
        builtRequests[task.taskIdentifier] = nil
    }

    /// The headers the interceptors added to `task`'s request.
    private func adaptedHeaders(of task: URLSessionTask) -> Set<String> {
        lock.lock()
        let built = builtRequests[task.taskIdentifier]
        lock.unlock()
        guard let built, let sent = task.originalRequest else { return [] }
        return RedirectPolicy.headersAdded(by: sent, to: built)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectPolicy.request(
            request,
            redirectedFrom: task.currentRequest ?? task.originalRequest,
            adaptedHeaders: adaptedHeaders(of: task)
        ))
    }
}
