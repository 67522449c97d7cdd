import Foundation

/// The body an ``Endpoint`` sends, and how it is encoded.
///
/// The builder sets `Content-Type` to match the body unless the endpoint already set one.
///
/// ```swift
/// var body: RequestBody { .json(SignIn(email: email, password: password)) }
/// var body: RequestBody { .form(["grant_type": "refresh_token"]) }
/// var body: RequestBody { .data(png, contentType: "image/png") }
/// var body: RequestBody { .file(videoURL, contentType: "video/mp4") }      // streamed from disk
/// var body: RequestBody { .multipart(MultipartForm([.text("name", "Kim"), .file("photo", at: photoURL)])) }
/// ```
///
/// A ``file(_:contentType:)`` body, and a ``multipart(_:)`` form with file parts, are not put in the
/// `URLRequest` that ``Endpoint/urlRequest(encoder:)`` builds: the provider streams them from disk
/// (see ``MultipartForm``) and sends the same bytes again on every attempt.
///
/// It may gain cases in a minor version: a `switch` over it needs a `default:` clause.
public enum RequestBody: Sendable {
    /// No body.
    case none
    /// A JSON body encoded from any `Encodable` value, with `encoder`, or the provider's encoder when `nil`.
    case json(any Encodable & Sendable, encoder: JSONEncoder? = nil)
    /// Raw bytes sent as they are, with the given `Content-Type`.
    case data(Data, contentType: String)
    /// An `application/x-www-form-urlencoded` body, its fields in the given order.
    case form([URLQueryItem])
    /// The bytes of a file, streamed from disk when sent, with the given `Content-Type`. A file that is
    /// missing or unreadable fails the call with ``NetworkError/invalidRequest(field:reason:)``.
    case file(URL, contentType: String)
    /// A `multipart/form-data` form; see ``MultipartForm``.
    case multipart(MultipartForm)

    /// A form body from a dictionary; fields are sorted by name so the bytes are stable.
    public static func form(_ fields: [String: String]) -> RequestBody {
        .form(fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) })
    }

    /// The body as it is sent: bytes in the request, or a file the provider streams.
    enum Encoded {
        /// Bytes for `httpBody`, and the `Content-Type` they imply.
        case inline(Data, contentType: String)
        /// A file sent as it is.
        case file(URL, contentType: String)
        /// A form with file parts, which the provider writes to a temporary file before sending.
        case spooled(MultipartForm)
    }

    /// Encodes the body (nil for ``none``).
    ///
    /// - Throws: ``NetworkError/encodingFailed(_:)`` carrying the encoder's error, or
    ///   ``NetworkError/invalidRequest(field:reason:)`` for a multipart form that would corrupt its framing
    ///   or names a file that cannot be read.
    func encoded(defaultEncoder: JSONEncoder) throws -> Encoded? {
        switch self {
        case .none:
            return nil
        case let .json(value, encoder):
            do {
                return .inline(try (encoder ?? defaultEncoder).encode(value), contentType: "application/json")
            } catch {
                throw NetworkError.encodingFailed(error)
            }
        case let .data(data, contentType):
            return .inline(data, contentType: contentType)
        case let .form(items):
            let encoded = PercentEncoding.query(items)
            return .inline(Data(encoded.utf8), contentType: "application/x-www-form-urlencoded; charset=utf-8")
        case let .file(url, contentType):
            return .file(url, contentType: contentType)
        case let .multipart(form):
            if form.hasFiles {
                try form.validate()
                return .spooled(form)
            }
            let (data, contentType) = try form.encodedInMemory()
            return .inline(data, contentType: contentType)
        }
    }
}

extension RequestBody {
    /// The size of a ``file(_:contentType:)`` body, or ``unreadableBodyFile`` when it is not a readable
    /// regular file (checked when the call is built, and again when a Linux attempt reads it).
    static func size(ofBodyFile file: URL) throws -> Int64 {
        guard let size = sizeOfReadableRegularFile(file) else { throw unreadableBodyFile }
        return size
    }

    /// A ``file(_:contentType:)`` body that is missing, not a regular file, or cannot be read.
    static var unreadableBodyFile: NetworkError {
        .invalidRequest(field: "body file", reason: "does not exist, is not a regular file or cannot be read")
    }

    /// The size of the file at `url` when it is a regular file this process can read (not a folder, pipe
    /// or device), else `nil`: what a file body, or a form's file part, may be sent from. A symbolic link
    /// is followed (the bytes sent are its target's), so a link to a regular file is accepted and a link
    /// to a folder, or to nothing, is not.
    static func sizeOfReadableRegularFile(_ url: URL) -> Int64? {
        guard url.isFileURL else { return nil }
        // attributesOfItem does not follow a link (it would report `.typeSymbolicLink`): ask about the
        // target. A dangling link resolves to itself, still a link, and is refused below.
        let path = url.resolvingSymlinksInPath().path
        guard FileManager.default.isReadableFile(atPath: path),
            let attributes = try? FileManager.default.attributesOfItem(atPath: path),   // missing: nil, as asked
            attributes[.type] as? FileAttributeType == .typeRegular
        else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}
