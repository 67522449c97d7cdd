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
/// - **The attempt's own origin** (scheme, host and port of the request the attempt sent) gets every
///   header the endpoint and the interceptors set, on every hop back to it.
/// - **Another origin** gets only ``crossOriginSafeHeaders`` that no interceptor set, and never a body:
///   a hop that would carry one there fails with ``NetworkError/redirectWouldForwardBody(statusCode:)``.
/// - Only http and https (else `transportFailed(unsupportedURL)`); https → http fails with
///   ``NetworkError/insecureRedirect(statusCode:)`` unless the provider allows it.
package enum RedirectPolicy {
    /// The header fields a cross-origin hop keeps (lower-cased): they say what the client accepts, not
    /// who it is.
    static let crossOriginSafeHeaders: Set<String> = ["accept", "accept-language", "accept-encoding", "user-agent"]

    /// Header fields (lower-cased) that go to every hop whatever its origin: empty in an app. The test
    /// kit registers its routing header (``keepOnEveryHop(_:)``), so a redirect through the mock
    /// reaches the same mock server.
    nonisolated(unsafe) private static var keptOnEveryHop: Set<String> = []   // guarded by `keptLock`
    private static let keptLock = NSLock()

    /// Makes the header `name` go to every hop: package plumbing for the test kit's routing header,
    /// which is no secret. Nothing in the library calls it.
    package static func keepOnEveryHop(_ name: String) {
        keptLock.lock()
        defer { keptLock.unlock() }
        keptOnEveryHop.insert(name.lowercased())
    }

    private static var headersKeptOnEveryHop: Set<String> {
        keptLock.lock()
        defer { keptLock.unlock() }
        return keptOnEveryHop
    }

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
    ///   - attempt: the request the attempt sent first, as the interceptors adapted it: its origin is the
    ///     call's own, and its headers are what a hop back to that origin carries.
    ///   - adaptedHeaders: the names of the headers the interceptors added or changed in `attempt`.
    ///   - hasBody: whether `current` carries a body (in memory, from a file, or a spooled form).
    ///   - allowsInsecure: whether https → http is followed.
    static func decision(
        statusCode: Int,
        location: String?,
        current: URLRequest,
        attempt: URLRequest,
        adaptedHeaders: @autoclosure () -> Set<String>,
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
        let ownOrigin = attempt.url.map(Origin.init)
        let isOwnOrigin = ownOrigin == Origin(target)
        if keepsBody, !isOwnOrigin { return .fail(.redirectWouldForwardBody(statusCode: statusCode)) }

        var next = current
        next.url = target
        next.httpMethod = nextMethod
        if Origin(from) == Origin(target) {
            // Within the origin the current hop is at: its headers as they are (a hop that had to leave
            // them behind does not get them back by moving within another origin).
        } else if isOwnOrigin, nextMethod == "GET" || nextMethod == "HEAD" {
            next.allHTTPHeaderFields = attempt.allHTTPHeaderFields   // back home from elsewhere: safe methods only
        } else {
            next.allHTTPHeaderFields = safeHeaders(of: attempt, adaptedHeaders: adaptedHeaders())
        }
        if !keepsBody {
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in (next.allHTTPHeaderFields ?? [:]).keys where bodyHeaders.contains(name.lowercased()) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return .follow(next, keepsBody: keepsBody)
    }

    /// Checks a request a ``RedirectBehavior/modify(_:)`` closure returned instead of `proposed`: the
    /// same scheme, downgrade and body rules hold, and if it leads to another origin than `proposed`,
    /// only the safe headers and those the closure itself added go with it.
    static func checked(
        _ modified: URLRequest, proposed: URLRequest, statusCode: Int, attempt: URLRequest, keepsBody: Bool, current: URLRequest,
        allowsInsecure: Bool
    ) -> Decision {
        guard let target = modified.url, let scheme = target.scheme?.lowercased(), redirectableSchemes.contains(scheme),
            target.host?.isEmpty == false
        else { return .fail(.transportFailed(URLError(.unsupportedURL))) }
        if !allowsInsecure, current.url?.scheme?.lowercased() == "https", scheme == "http" {
            return .fail(.insecureRedirect(statusCode: statusCode))
        }
        let isOwnOrigin = attempt.url.map(Origin.init) == Origin(target)
        if keepsBody, !isOwnOrigin { return .fail(.redirectWouldForwardBody(statusCode: statusCode)) }
        guard let proposedURL = proposed.url, Origin(proposedURL) != Origin(target), !isOwnOrigin else {
            return .follow(modified, keepsBody: keepsBody)
        }
        var stripped = modified
        let added = headersAdded(by: modified, to: proposed)
        let always = headersKeptOnEveryHop
        for name in (modified.allHTTPHeaderFields ?? [:]).keys
        where !crossOriginSafeHeaders.contains(name.lowercased()) && !always.contains(name.lowercased()) && !added.contains(name) {
            stripped.setValue(nil, forHTTPHeaderField: name)
        }
        return .follow(stripped, keepsBody: keepsBody)
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

    /// The ``crossOriginSafeHeaders`` of `request` that no interceptor set (an adapter may put a token
    /// in any header, `User-Agent` included).
    static func safeHeaders(of request: URLRequest, adaptedHeaders: Set<String>) -> [String: String] {
        let adapted = Set(adaptedHeaders.map { $0.lowercased() })
        let always = headersKeptOnEveryHop
        var kept: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            let lowered = name.lowercased()
            if always.contains(lowered) || (crossOriginSafeHeaders.contains(lowered) && !adapted.contains(lowered)) {
                kept[name] = value
            }
        }
        return kept
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
