import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the provider does with a redirect (as OkHttp and browsers do, and Linux URLSession does not).
///
/// - **Same origin** (scheme, host and port unchanged): followed as the server asked.
/// - **Another origin**: every header field of the request is removed except ``crossOriginSafeHeaders``
///   (`Accept`, `Accept-Language`, `Accept-Encoding`, `User-Agent`), and those too when an interceptor
///   added or changed them, since an adapter may put a token in any header. `Content-Type` is not kept:
///   no body goes to another origin.
/// - **Another origin, with the body**: a redirect that would resend the request body (307 or 308 of a
///   request with a body, or any redirect whose next request still carries one) is not followed; the
///   provider throws ``NetworkError/redirectWouldForwardBody(statusCode:)``.
///
/// Linux URLSession would otherwise forward every header (`Authorization`, `X-Api-Key`, ...) to the
/// new host. It also drops the body of every redirect it follows (measured: a 307 arrives with
/// `Content-Length: 0`), so there a same-origin 307/308 with a body is sent again by the provider
/// itself, body included (``Decision/resend(_:)``).
enum RedirectPolicy {
    /// The header fields a cross-origin redirect keeps (lower-cased): they say what the client accepts,
    /// not who it is.
    static let crossOriginSafeHeaders: Set<String> = ["accept", "accept-language", "accept-encoding", "user-agent"]

    /// The redirect statuses that resend the method and body.
    static let bodyPreservingStatusCodes: Set<Int> = [307, 308]

    /// Whether URLSession loses the body of a redirect it follows: FoundationNetworking (Linux) does.
    #if canImport(FoundationNetworking)
    static let sessionDropsRedirectBody = true
    #else
    static let sessionDropsRedirectBody = false
    #endif

    /// What to do with one redirect.
    enum Decision: Equatable {
        /// Follow it with this request.
        case follow(URLRequest)
        /// Do not follow it: it would send the body to another origin. The call fails with
        /// ``NetworkError/redirectWouldForwardBody(statusCode:)``.
        case refuse(statusCode: Int)
        /// Do not let URLSession follow it (it would lose the body); the provider sends this request,
        /// body included, itself.
        case resend(URLRequest)
    }

    /// The decision for a redirect with `statusCode` from `current` (the request that got the redirect)
    /// to `redirect` (the request URLSession proposes); `adaptedHeaders` are the names of the headers
    /// the interceptors added or changed.
    static func decision(
        for redirect: URLRequest,
        statusCode: Int,
        from current: URLRequest?,
        adaptedHeaders: Set<String> = [],
        sessionDropsBody: Bool = RedirectPolicy.sessionDropsRedirectBody
    ) -> Decision {
        guard let current, let from = current.url, let to = redirect.url else { return .follow(redirect) }
        let resendsBody = bodyPreservingStatusCodes.contains(statusCode) && hasBody(current)
        guard Origin(from) != Origin(to) else {
            if sessionDropsBody, resendsBody, redirect.httpBody?.isEmpty == false { return .resend(redirect) }
            return .follow(redirect)
        }
        if resendsBody || hasBody(redirect) { return .refuse(statusCode: statusCode) }
        return .follow(request(redirect, redirectedFrom: current, adaptedHeaders: adaptedHeaders))
    }

    /// `redirect` as it may be sent: unchanged for the same origin; for another origin, with only the
    /// ``crossOriginSafeHeaders`` the interceptors did not set (`adaptedHeaders`).
    static func request(_ redirect: URLRequest, redirectedFrom original: URLRequest?, adaptedHeaders: Set<String> = []) -> URLRequest {
        guard let from = original?.url, let to = redirect.url, Origin(from) != Origin(to) else {
            return redirect
        }
        let adapted = Set(adaptedHeaders.map { $0.lowercased() })
        var stripped = redirect
        for name in (redirect.allHTTPHeaderFields ?? [:]).keys {
            let lowered = name.lowercased()
            if !crossOriginSafeHeaders.contains(lowered) || adapted.contains(lowered) {
                stripped.setValue(nil, forHTTPHeaderField: name)
            }
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

    /// Whether `request` carries a body.
    static func hasBody(_ request: URLRequest) -> Bool {
        request.httpBody?.isEmpty == false || request.httpBodyStream != nil
    }
}

/// The provider's session delegate: on Linux only a session delegate (not a per-task one) is told
/// about redirects. It applies ``RedirectPolicy`` and remembers, per task, a redirect it did not let
/// URLSession follow, for the provider to act on when the task completes.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `builtRequests` and `refusedRedirects` are guarded by `lock`.
    private let lock = NSLock()
    private var builtRequests: [Int: URLRequest] = [:]
    private var refusedRedirects: [Int: RedirectPolicy.Decision] = [:]

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

    /// The redirect `task` was not allowed to follow (``RedirectPolicy/Decision/refuse(statusCode:)``
    /// or ``RedirectPolicy/Decision/resend(_:)``), if any; forgotten once taken. The task then
    /// completed with the redirect response itself.
    func takeRefusedRedirect(of task: URLSessionTask) -> RedirectPolicy.Decision? {
        lock.lock(); defer { lock.unlock() }
        return refusedRedirects.removeValue(forKey: task.taskIdentifier)
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
        let decision = RedirectPolicy.decision(
            for: request,
            statusCode: response.statusCode,
            from: task.currentRequest ?? task.originalRequest,
            adaptedHeaders: adaptedHeaders(of: task)
        )
        if case .follow(let next) = decision {
            completionHandler(next)
            return
        }
        lock.lock()
        refusedRedirects[task.taskIdentifier] = decision
        lock.unlock()
        // Not following makes the task complete with the redirect response itself.
        completionHandler(nil)
    }
}
