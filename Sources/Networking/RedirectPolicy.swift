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
    // @unchecked: `adaptedHeaders` is guarded by `lock`.
    private let lock = NSLock()
    private var adaptedHeaders: [Int: Set<String>] = [:]

    /// Remembers which headers of `task`'s request the interceptors added, until ``forget(_:)``.
    func remember(_ names: Set<String>, for task: URLSessionTask) {
        guard !names.isEmpty else { return }
        lock.lock(); defer { lock.unlock() }
        adaptedHeaders[task.taskIdentifier] = names
    }

    func forget(_ task: URLSessionTask) {
        lock.lock(); defer { lock.unlock() }
        adaptedHeaders[task.taskIdentifier] = nil
    }

    private func adaptedHeaders(of task: URLSessionTask) -> Set<String> {
        lock.lock(); defer { lock.unlock() }
        return adaptedHeaders[task.taskIdentifier] ?? []
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
