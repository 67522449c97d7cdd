import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How an ``AuthInterceptor`` puts the access token on a request: a header name and a prefix.
///
/// ```swift
/// .bearer                                         // Authorization: Bearer <token>
/// AuthorizationHeader(name: "accessToken")        // accessToken: <token>
/// AuthorizationHeader(name: "Authorization", prefix: "Token ")
/// ```
public struct AuthorizationHeader: Hashable, Sendable {
    /// The header field name.
    public var name: String
    /// Text before the token, including any space (`"Bearer "`); empty for the raw token.
    public var prefix: String

    /// Creates a header description; the default prefix is none (the raw token).
    public init(name: String, prefix: String = "") {
        self.name = name
        self.prefix = prefix
    }

    /// `Authorization: Bearer <token>`.
    public static let bearer = AuthorizationHeader(name: "Authorization", prefix: "Bearer ")

    /// `request` with the header set to `token`.
    func apply(_ token: String, to request: URLRequest) -> URLRequest {
        var request = request
        request.setHeaderFields([name: prefix + token])
        return request
    }

    /// The token `request` carries in this header, if any.
    func token(in request: URLRequest) -> String? {
        guard let value = request.headerField(name), value.hasPrefix(prefix) else { return nil }
        return String(value.dropFirst(prefix.count))
    }
}
