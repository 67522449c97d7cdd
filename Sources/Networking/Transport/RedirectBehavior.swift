import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the provider does when a response is a redirect (301, 302, 303, 307 or 308 with a `Location`).
///
/// The provider follows redirects itself, with the same rules on every platform (the tables are in the
/// Redirects guide); URLSession never does. Set a default on the provider and override it per
/// endpoint with ``Endpoint/redirectBehavior``.
///
/// ```swift
/// struct Avatar: Endpoint {
///     var baseURL: URL { URL(string: "https://api.example.com")! }
///     var path: String { "/me/avatar" }
///     var redirectBehavior: RedirectBehavior? { .doNotFollow }   // the app reads the 302's Location itself
///     var acceptableStatusCodes: Set<Int> { [200, 302] }
/// }
/// ```
public struct RedirectBehavior: Sendable {
    /// Decides the request sent for one hop, or `nil` to stop there; see ``modify(_:)``.
    public typealias Modifier = @Sendable (_ next: URLRequest, _ response: HTTPURLResponse) async throws -> URLRequest?

    enum Kind: Sendable {
        case follow
        case doNotFollow
        case modify(Modifier)
    }

    let kind: Kind

    /// Follow every redirect by the provider's rules (the default).
    public static let follow = RedirectBehavior(kind: .follow)

    /// Follow none: the 3xx is the response, validated like any other (so it throws
    /// ``NetworkError/invalidStatusCode(_:)`` unless the endpoint accepts it).
    public static let doNotFollow = RedirectBehavior(kind: .doNotFollow)

    /// Follow by the provider's rules, but let `modifier` see each hop first: it gets the request the
    /// rules would send next and the redirect response, and returns the request to send (changed or
    /// not), `nil` to stop (the 3xx is then the response), or throws: like any error of an attempt, the
    /// retriers see it first, then the call fails with it. Keep it quick: the call's deadline is checked
    /// when it returns, not while it runs.
    ///
    /// The rules still hold for what it returns: only http and https, no https → http unless the
    /// provider allows it, no body to another origin; and when it points the hop at another URL than the
    /// proposed one, its headers are decided again for the URL it really goes to, as if the server had
    /// redirected there (another origin gets only the safe headers that no interceptor set; after a hop to
    /// another origin the call's own origin gets its credentials back only at the URL the attempt started
    /// from), with the headers the closure added or changed itself on top.
    ///
    /// ```swift
    /// var redirectBehavior: RedirectBehavior? {
    ///     .modify { next, _ in next.url?.host == "cdn.example.com" ? next : nil }   // only our CDN
    /// }
    /// ```
    public static func modify(_ modifier: @escaping Modifier) -> RedirectBehavior {
        RedirectBehavior(kind: .modify(modifier))
    }

    /// Whether a redirect is followed at all.
    var follows: Bool {
        if case .doNotFollow = kind { return false }
        return true
    }
}
