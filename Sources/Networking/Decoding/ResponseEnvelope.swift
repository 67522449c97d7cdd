import Foundation

/// The fields an app's API wraps around every answer, such as
/// `{"divisionCode": "0000", "resultMsg": "OK", "data": {…}}`: declare them once as a `Decodable` type
/// (without the payload) and say which of them mean a failure.
///
/// ```swift
/// struct APIEnvelope: ResponseEnvelope {
///     let divisionCode: String
///     let resultMsg: String?
///
///     func failure(statusCode: Int) -> EnvelopeFailure? {
///         switch divisionCode {
///         case "0000": return nil
///         case "E401": return EnvelopeFailure(APIError(code: divisionCode, message: resultMsg), standsForStatus: 401)
///         default: return EnvelopeFailure(APIError(code: divisionCode, message: resultMsg))
///         }
///     }
/// }
/// let provider = NetworkProvider(envelope: EnvelopeFormat(APIEnvelope.self), interceptor: auth)
/// ```
///
/// The provider reads the envelope while it validates each attempt, before any retrier is asked (see
/// ``EnvelopeFormat``): a failure inside a `200` throws your error, and is seen by the retriers and the
/// ``AuthInterceptor`` as the status it ``EnvelopeFailure/standsForStatus``.
public protocol ResponseEnvelope: Decodable, Sendable {
    /// What this answer says: `nil` for a success, or the app's failure. `statusCode` is the answer's
    /// HTTP status, so the error can carry it (an envelope in a `500` body is read too).
    func failure(statusCode: Int) -> EnvelopeFailure?
}

/// A failure an envelope reports: the app's error, and the HTTP status it stands for, if any.
public struct EnvelopeFailure: Sendable {
    /// The error the call throws: the app's own (the provider never wraps it).
    public let error: any Error
    /// The HTTP status this failure means, whatever status carried it: a `401` makes the
    /// ``AuthInterceptor`` refresh (when 401 is one of its expired statuses), a `503` makes a
    /// ``RetryPolicy`` retry, a `400`, `401` or `403` to the refresh call ends the session. `nil`: the
    /// answer's own status counts. See ``Response/envelopeStatusCode``.
    public let standsForStatus: Int?

    /// Creates a failure throwing `error`, standing for `standsForStatus` when not `nil`.
    public init(_ error: any Error, standsForStatus: Int? = nil) {
        self.error = error
        self.standsForStatus = standsForStatus
    }
}

/// How answers are wrapped: the app's ``ResponseEnvelope`` and where the payload is. Give it to the
/// provider (``NetworkProvider/init(envelope:configuration:interceptor:encoder:decoder:maximumAttempts:deadline:maximumResponseSize:redirectBehavior:allowsInsecureRedirects:cache:cachePolicy:usesSessionURLCache:now:serverTrust:errorMapper:monitors:sleep:)``)
/// or to one endpoint (``Endpoint/envelope``; ``unwrapped`` for an endpoint whose answers have none).
///
/// With an envelope, every attempt whose body is in memory is checked while it is validated:
/// - an acceptable status (2xx) whose envelope reports a failure throws the app's error (the retriers
///   and the ``AuthInterceptor`` see it first, with ``Response/envelopeStatusCode``);
/// - an unacceptable status whose body is an envelope reporting a failure throws the app's error too;
///   one whose body is not an envelope (a proxy's HTML page) throws as without one (the provider's
///   error mapper, else ``NetworkError/invalidStatusCode(_:)``);
/// - an acceptable answer whose body is not the envelope (a field missing, of the wrong type, `null`)
///   throws ``NetworkError/decodingFailed(type:error:)`` naming the envelope and the field, never a
///   success;
/// - an answer with no body at all (a `204`) has no envelope: it decodes as ``EmptyResponse``;
/// - an acceptable answer that is no 2xx (a 3xx the endpoint accepts unfollowed) is not read;
/// - a `206` (the server's or the cache's, to an app's `Range` request) is not read: its body is a part of
///   the representation, not an envelope (RFC 9110 §15.3.7).
///
/// The payload is decoded at ``payloadKeyPath`` with the endpoint's decoder (else the provider's); a
/// key path the caller gives is read inside it, once (`"user"` reads `data.user`), and a key missing
/// under it fails. Without a key path, a missing or `null` payload decodes as ``EmptyResponse`` or
/// `nil` for an `Optional`, and fails for any other type, naming the field. A stored answer is read
/// through the envelope too: one that is no success envelope is a cache miss. Downloads and streams are not read (their body is not in memory), except for the
/// error body of an unacceptable status.
public struct EnvelopeFormat: Sendable {
    /// The key path of the payload in the envelope, e.g. `"data"` (empty: the whole body).
    public let payloadKeyPath: String
    /// The name decoding errors give the envelope, e.g. `APIEnvelope envelope`.
    let name: String
    /// Decodes the envelope with a decoder and asks it about a status; `nil` for ``unwrapped``.
    let read: (@Sendable (Data, JSONDecoder, Int) throws -> EnvelopeFailure?)?

    /// An envelope of `fields`, whose payload is at `payloadKeyPath` (`"data"` by default; dots
    /// separate keys: `"result.data"`).
    public init<Fields: ResponseEnvelope>(_ fields: Fields.Type, payloadKeyPath: String = "data") {
        self.payloadKeyPath = payloadKeyPath
        self.name = "\(Fields.self) envelope"
        self.read = { data, decoder, status in try decoder.decode(Fields.self, from: data).failure(statusCode: status) }
    }

    private init() {
        payloadKeyPath = ""
        name = "unwrapped"
        read = nil
    }

    /// No envelope: for an endpoint whose answers are not wrapped when the provider's are.
    public static let unwrapped = EnvelopeFormat()

    /// Whether answers are not wrapped (``unwrapped``).
    public var isUnwrapped: Bool { read == nil }
}
