import Foundation

/// The body an ``Endpoint`` sends, and how it is encoded.
///
/// The builder sets `Content-Type` to match the body unless the endpoint already set one.
///
/// ```swift
/// var body: RequestBody { .json(SignIn(email: email, password: password)) }
/// var body: RequestBody { .form(["grant_type": "refresh_token"]) }
/// var body: RequestBody { .data(png, contentType: "image/png") }
/// ```
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// A JSON body encoded from any `Encodable` value, with `encoder`, or the provider's encoder when `nil`.
    case json(any Encodable & Sendable, encoder: JSONEncoder? = nil)
    /// Raw bytes sent as they are, with the given `Content-Type`.
    case data(Data, contentType: String)
    /// An `application/x-www-form-urlencoded` body, its fields in the given order.
    case form([URLQueryItem])

    /// A form body from a dictionary; fields are sorted by name so the bytes are stable.
    public static func form(_ fields: [String: String]) -> RequestBody {
        .form(fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) })
    }

    /// Encodes the body, returning the bytes and the content type it implies (nil for ``none``).
    ///
    /// - Throws: ``NetworkError/encodingFailed(_:)`` carrying the encoder's error.
    func encoded(defaultEncoder: JSONEncoder) throws -> (data: Data, contentType: String)? {
        switch self {
        case .none:
            return nil
        case let .json(value, encoder):
            do {
                return (try (encoder ?? defaultEncoder).encode(value), "application/json")
            } catch {
                throw NetworkError.encodingFailed(error)
            }
        case let .data(data, contentType):
            return (data, contentType)
        case let .form(items):
            let encoded = PercentEncoding.query(items)
            return (Data(encoded.utf8), "application/x-www-form-urlencoded; charset=utf-8")
        }
    }
}
