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
/// - **Another scheme** than http or https (`file:`, `data:`, `ftp:`), or more than 16 redirects: not
///   followed; the call fails with ``NetworkError/transportFailed(_:)`` (`unsupportedURL`,
///   `httpTooManyRedirects`).
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
        /// Do not follow it; the call fails with ``NetworkError/transportFailed(_:)`` carrying this
        /// code: `unsupportedURL` for a scheme other than http and https (`file:`, `data:`, `ftp:`),
        /// `httpTooManyRedirects` past ``SessionDelegate/maximumRedirects``.
        case fail(URLError.Code)
    }

    /// The schemes a redirect may lead to.
    static let redirectableSchemes: Set<String> = ["http", "https"]

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
        guard let to = redirect.url, let scheme = to.scheme?.lowercased(), redirectableSchemes.contains(scheme) else {
            return .fail(.unsupportedURL)   // never to a local file, inline data, or another protocol
        }
        guard let current, let from = current.url else { return .follow(redirect) }
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
