import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The value of a response whose body you do not need: decode as `EmptyResponse` for a `204 No Content`, a
/// `HEAD` request or any other answer that has no body.
///
/// A response with no body (status 204 or 205, a `HEAD` request, `Content-Length: 0`, or simply zero
/// bytes) decodes as `EmptyResponse`, as `nil` for any `Optional` type, and as any other
/// ``EmptyBodyDecodable`` type's ``EmptyBodyDecodable/emptyBodyValue``; every other type fails with
/// ``NetworkError/decodingFailed(type:error:)`` saying the body was empty. A body that is not empty is
/// decoded by the `JSONDecoder` as usual: any JSON value decodes as `EmptyResponse`, its content ignored.
///
/// ```swift
/// let nothing = try await provider.request(UserAPI.delete(id: 3), as: EmptyResponse.self)
/// let user = try await provider.request(UserAPI.user(id: 3), as: User?.self)   // nil for a 204
/// ```
///
/// It encodes as `{}`. (It is not named `Empty`, so that it never clashes with Combine's `Empty`
/// publisher in an app that imports both.)
public struct EmptyResponse: Codable, Hashable, Sendable {
    /// The empty value.
    public init() {}

    /// Decodes any JSON value, ignoring its content.
    public init(from decoder: any Decoder) throws {}

    /// Encodes `{}`.
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }

    /// The keys of `{}`: none.
    private enum NoKeys: CodingKey {}
}

/// A type that a response with no body decodes to, as ``EmptyResponse`` and every `Optional` do.
///
/// Conform a type of your own when an empty body means a value of it, such as an empty page:
///
/// ```swift
/// extension Page: EmptyBodyDecodable {
///     static var emptyBodyValue: Page { Page(items: []) }
/// }
/// ```
public protocol EmptyBodyDecodable: Decodable {
    /// The value a response with no body decodes to.
    static var emptyBodyValue: Self { get }
}

extension EmptyResponse: EmptyBodyDecodable {
    /// An ``EmptyResponse`` value.
    public static var emptyBodyValue: EmptyResponse { EmptyResponse() }
}

extension Optional: EmptyBodyDecodable where Wrapped: Decodable {
    /// `nil`: an optional decodes as `nil` from a response with no body.
    public static var emptyBodyValue: Wrapped? { nil }
}

/// Why a response's body decodes as nothing: the underlying error of the `DecodingError` a type
/// that is not ``EmptyBodyDecodable`` fails with.
struct EmptyResponseBody: Error, CustomStringConvertible {
    /// The response's status code.
    let statusCode: Int

    var description: String { "the response body was empty (status \(statusCode))" }
}

extension Response {
    /// Whether the response has no body to decode: status 204 or 205, an answer to `HEAD`, zero bytes
    /// (which a `Content-Length: 0` means), or only JSON white space (some servers send a bare newline).
    var hasNoBody: Bool {
        statusCode == 204 || statusCode == 205 || request.httpMethod == HTTPMethod.head.rawValue
            || !data.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }   // stops at the first other byte
    }
}
