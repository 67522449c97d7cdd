/// An HTTP request method.
///
/// An open set: the common methods are static members, and any other token can be spelled with
/// `HTTPMethod(rawValue:)` or a string literal.
///
/// ```swift
/// let method: HTTPMethod = .get
/// let custom: HTTPMethod = "PURGE"
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token as sent on the request line, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its token. The token is used as given (HTTP methods are case-sensitive).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a method from a string literal, e.g. `"PURGE"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The method token.
    public var description: String { rawValue }

    /// `CONNECT`
    public static let connect: HTTPMethod = "CONNECT"
    /// `DELETE`
    public static let delete: HTTPMethod = "DELETE"
    /// `GET`
    public static let get: HTTPMethod = "GET"
    /// `HEAD`
    public static let head: HTTPMethod = "HEAD"
    /// `OPTIONS`
    public static let options: HTTPMethod = "OPTIONS"
    /// `PATCH`
    public static let patch: HTTPMethod = "PATCH"
    /// `POST`
    public static let post: HTTPMethod = "POST"
    /// `PUT`
    public static let put: HTTPMethod = "PUT"
    /// `TRACE`
    public static let trace: HTTPMethod = "TRACE"

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2):
    /// `GET`, `HEAD`, `OPTIONS`, `PUT`, `DELETE` and `TRACE`.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .options, .put, .delete, .trace: return true
        default: return false
        }
    }
}
