import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The provider's redirect rules: one pure function decides every hop, the same on every platform.
/// URLSession never follows a redirect itself (its rules differ between Linux and Apple platforms, and
/// neither can see a body sent from a file), so what the tests prove here is what an app gets.
///
/// | status | method and body of the next hop |
/// |---|---|
/// | 301, 302 | POST becomes GET without a body; every other method keeps its method and body |
/// | 303 | GET without a body (HEAD stays HEAD) |
/// | 307, 308 | method and body unchanged |
/// | any other 3xx, or no usable `Location` | not a redirect: the response is the answer |
///
/// - `Location` is resolved against the URL that got the redirect (relative, scheme-relative); when it
///   has no fragment the next URL keeps the current one (RFC 9110 §10.2.2).
/// - A body that is dropped takes its header fields with it (`Content-Type`, `Content-Length`,
///   `Content-Encoding`, `Content-Language`, `Content-Location`, `Transfer-Encoding`).
/// - Which headers a hop carries is decided by ``RedirectChain`` on the URL it really goes to (after a
///   ``RedirectBehavior/modify(_:)`` too): the attempt's own origin (scheme, host and port of the request
///   the attempt sent) gets every header the endpoint and the interceptors set while no hop has left it,
///   and after one did only at the exact URL a `GET` or `HEAD` attempt started from (by `GET` or `HEAD`);
///   anywhere else only
///   ``crossOriginSafeHeaders`` that no interceptor set (RFC 9110 §15.4).
/// - **Another origin** never gets a body: a hop that would carry one there fails with
///   ``NetworkError/redirectWouldForwardBody(statusCode:)``.
/// - Only http and https (else `transportFailed(unsupportedURL)`); https → http fails with
///   ``NetworkError/insecureRedirect(statusCode:)`` unless the provider allows it.
package enum RedirectPolicy {
    /// The header fields a cross-origin hop keeps (lower-cased): they say what the client accepts, not
    /// who it is.
    static let crossOriginSafeHeaders: Set<String> = ["accept", "accept-language", "accept-encoding", "user-agent"]

    /// Did make the header `name` go to every hop of every provider, process-wide. It does nothing now:
    /// each provider keeps the routing header of the URL protocol its own session sends through (see
    /// ``HeaderRoutedURLProtocol``). Kept for the API check; nothing calls it.
    @available(*, deprecated, message: "A provider keeps the routing header of the URL protocol its session sends through (HeaderRoutedURLProtocol)")
    package static func keepOnEveryHop(_ name: String) {}

    /// The header fields that describe a body, removed with it.
    static let bodyHeaders: Set<String> = [
        "content-type", "content-length", "content-encoding", "content-language", "content-location", "transfer-encoding",
    ]

    /// The most hops one attempt follows (browsers allow about 20).
    static let maximumHops = 16

    /// The schemes a redirect may lead to.
    static let redirectableSchemes: Set<String> = ["http", "https"]

    /// What to do with one response.
    enum Decision: Equatable {
        /// It is not a redirect the provider follows: the response is the answer.
        case answer
        /// Send this request next; `keepsBody` says whether the current body goes with it.
        case follow(URLRequest, keepsBody: Bool)
        /// Do not follow it: the call fails with this error.
        case fail(NetworkError)
    }

    /// Whether a response with `statusCode` and `location` is one the provider would follow: such a
    /// response's body is only gathered (bounded), never delivered to a download or a stream.
    static func isRedirect(statusCode: Int, location: String?) -> Bool {
        isRedirectStatus(statusCode) && location?.isEmpty == false
    }

    /// Whether `response` is one the provider would follow; its headers are looked at only for a
    /// redirect status (every response of every call passes here).
    static func isRedirect(_ response: HTTPURLResponse) -> Bool {
        isRedirectStatus(response.statusCode) && response.value(forHTTPHeaderField: "Location")?.isEmpty == false
    }

    /// 301, 302, 303, 307 or 308.
    static func isRedirectStatus(_ statusCode: Int) -> Bool {
        switch statusCode {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    /// The next hop after `statusCode` with `location`, for `current` (the request that got it).
    ///
    /// - Parameters:
    ///   - chain: the attempt's chain: its first request, the headers the interceptors set, and where its
    ///     hops have been; it decides the next hop's headers.
    ///   - hasBody: whether `current` carries a body (in memory, from a file, or a spooled form).
    ///   - allowsInsecure: whether https → http is followed.
    static func decision(
        statusCode: Int,
        location: String?,
        current: URLRequest,
        chain: RedirectChain,
        hasBody: Bool,
        allowsInsecure: Bool
    ) -> Decision {
        guard isRedirect(statusCode: statusCode, location: location), let location, let from = current.url else { return .answer }
        guard let resolved = resolve(location, against: from) else {
            return .fail(.transportFailed(URLError(.badURL)))   // a Location no URL parser on any platform would take
        }
        guard let scheme = resolved.scheme?.lowercased(), redirectableSchemes.contains(scheme), resolved.host?.isEmpty == false else {
            return .fail(.transportFailed(URLError(.unsupportedURL)))   // never a local file, inline data or another protocol
        }
        if !allowsInsecure, from.scheme?.lowercased() == "https", scheme == "http" {
            return .fail(.insecureRedirect(statusCode: statusCode))
        }
        let target = inheritingFragment(of: from, into: resolved)
        let method = current.httpMethod ?? "GET"
        let nextMethod: String
        switch statusCode {
        case 303: nextMethod = method == "HEAD" ? "HEAD" : "GET"
        case 301, 302: nextMethod = method == "POST" ? "GET" : method
        default: nextMethod = method
        }
        let keepsBody = hasBody && nextMethod == method && statusCode != 303
        if keepsBody, !chain.isHome(target) { return .fail(.redirectWouldForwardBody(statusCode: statusCode)) }

        var next = current
        next.url = target
        next.httpMethod = nextMethod
        next.allHTTPHeaderFields = chain.headers(forHopTo: target, method: nextMethod, after: current)
        if !keepsBody {
            next.httpBody = nil
            next.httpBodyStream = nil
            removeBodyHeaders(from: &next)
        }
        return .follow(next, keepsBody: keepsBody)
    }

    /// Checks a request a ``RedirectBehavior/modify(_:)`` closure returned instead of `proposed`: the
    /// same scheme, downgrade and body rules hold, and its headers are decided again for the URL it
    /// really goes to (``RedirectChain/headers(forHopTo:method:after:)``), with the changes the closure
    /// made to `proposed`'s headers on top: what it added or changed goes along, what it removed stays off.
    static func checked(
        _ modified: URLRequest, proposed: URLRequest, statusCode: Int, chain: RedirectChain, keepsBody: Bool, current: URLRequest,
        allowsInsecure: Bool
    ) -> Decision {
        guard let target = modified.url, let scheme = target.scheme?.lowercased(), redirectableSchemes.contains(scheme),
            target.host?.isEmpty == false
        else { return .fail(.transportFailed(URLError(.unsupportedURL))) }
        if !allowsInsecure, current.url?.scheme?.lowercased() == "https", scheme == "http" {
            return .fail(.insecureRedirect(statusCode: statusCode))
        }
        if keepsBody, !chain.isHome(target) { return .fail(.redirectWouldForwardBody(statusCode: statusCode)) }
        let method = modified.httpMethod ?? "GET"
        if proposed.url == target, proposed.httpMethod ?? "GET" == method { return .follow(modified, keepsBody: keepsBody) }
        var next = modified
        next.allHTTPHeaderFields = chain.headers(forHopTo: target, method: method, after: current)
        if !keepsBody { removeBodyHeaders(from: &next) }
        let proposedFields = proposed.allHTTPHeaderFields ?? [:]
        for name in proposedFields.keys where modified.value(forHTTPHeaderField: name) == nil {
            next.setValue(nil, forHTTPHeaderField: name)   // the closure took it off
        }
        for name in headersAdded(by: modified, to: proposed) {
            next.setValue(modified.value(forHTTPHeaderField: name), forHTTPHeaderField: name)   // the closure's own
        }
        return .follow(next, keepsBody: keepsBody)
    }

    /// Removes the ``bodyHeaders`` from `request`.
    private static func removeBodyHeaders(from request: inout URLRequest) {
        for name in (request.allHTTPHeaderFields ?? [:]).keys where bodyHeaders.contains(name.lowercased()) {
            request.setValue(nil, forHTTPHeaderField: name)
        }
    }

    /// `location` resolved against `from`, parsed the same way on every platform: spaces, non-ASCII and
    /// the characters older Apple parsers refuse (`"<>\^`{|}`) are percent-encoded first; a control
    /// character, or a Location that still does not parse, gives `nil`.
    static func resolve(_ location: String, against from: URL) -> URL? {
        guard !location.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            let encoded = location.addingPercentEncoding(withAllowedCharacters: locationAllowed)
        else { return nil }
        return URL(string: encoded, relativeTo: from)?.absoluteURL
    }

    /// What a `Location` may hold as it is: visible ASCII but `"<>\^`{|}` (`%` is kept, so existing
    /// escapes stay as they are).
    private static let locationAllowed: CharacterSet = {
        var allowed = CharacterSet(charactersIn: Unicode.Scalar(0x21)...Unicode.Scalar(0x7E))
        allowed.remove(charactersIn: "\"<>\\^`{|}")
        return allowed
    }()

    /// `resolved`, with the fragment of `from` when it has none of its own (RFC 9110 §10.2.2).
    static func inheritingFragment(of from: URL, into resolved: URL) -> URL {
        guard resolved.fragment == nil, let fragment = from.fragment,
            var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false)
        else { return resolved }
        components.percentEncodedFragment = fragment
        return components.url ?? resolved
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

    /// Whether `request` carries a body in memory.
    static func hasBody(_ request: URLRequest) -> Bool {
        request.httpBody?.isEmpty == false || request.httpBodyStream != nil
    }
}
