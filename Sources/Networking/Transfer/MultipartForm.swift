import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields, bytes and files, in order.
///
/// Files are streamed from disk: the provider copies the form into a temporary file 64 KB at a time and
/// sends that file, so a 1 GB upload raises memory by a few MB; the same file is sent again when a 401 is
/// answered by a token refresh, and deleted when the call ends. A form with only text and data parts is
/// built in memory. The boundary is random and checked never to occur inside a part.
///
/// ```swift
/// var body: RequestBody {
///     .multipart(MultipartForm([
///         .text("nickname", "홍길동"),
///         .file("photo", at: photoURL),                       // image/jpeg from the extension
///         .data("thumbnail", thumbnail, filename: "thumb.png"),
///     ]))
/// }
/// ```
public struct MultipartForm: Sendable {
    /// One part of the form.
    public struct Part: Sendable {
        /// Where a part's bytes come from.
        public enum Content: Sendable {
            /// Bytes in memory.
            case data(Data)
            /// A file, read when the body is sent.
            case file(URL)
        }

        /// The field name. Any Unicode text without CR, LF or NUL; sent as UTF-8, as browsers do.
        public var name: String
        /// The file name the server sees, or `nil` for a plain field.
        public var filename: String?
        /// The part's `Content-Type`, or `nil` to send none (a text field).
        public var contentType: String?
        /// More header fields of the part (not `Content-Disposition` or `Content-Type`, which are built).
        public var headers: [String: String]
        /// The part's bytes.
        public var content: Content

        /// Creates a part; the static functions below cover the usual cases.
        public init(name: String, filename: String? = nil, contentType: String? = nil, headers: [String: String] = [:], content: Content) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.headers = headers
            self.content = content
        }

        /// A text field, sent as UTF-8 with no `Content-Type` (RFC 7578's `text/plain` default).
        public static func text(_ name: String, _ value: String) -> Part {
            Part(name: name, content: .data(Data(value.utf8)))
        }

        /// Bytes sent as a file part: `contentType` defaults to the one `filename`'s extension implies.
        public static func data(_ name: String, _ data: Data, filename: String, contentType: String? = nil) -> Part {
            Part(
                name: name, filename: filename, contentType: contentType ?? MultipartForm.contentType(forExtension: (filename as NSString).pathExtension),
                content: .data(data))
        }

        /// A file streamed from disk. `filename` defaults to the file's own name, `contentType` to the
        /// one its extension implies (`application/octet-stream` when unknown).
        public static func file(_ name: String, at url: URL, filename: String? = nil, contentType: String? = nil) -> Part {
            Part(
                name: name, filename: filename ?? url.lastPathComponent,
                contentType: contentType ?? MultipartForm.contentType(forExtension: url.pathExtension), content: .file(url))
        }
    }

    /// The parts, in the order they are sent.
    public var parts: [Part]

    /// Creates a form from its parts.
    public init(_ parts: [Part]) {
        self.parts = parts
    }

    /// Whether any part is a file on disk (the form is then sent from a temporary file).
    var hasFiles: Bool {
        parts.contains { if case .file = $0.content { return true } else { return false } }
    }

    /// The `Content-Type` for a file name extension: common image, audio, video and document types;
    /// `application/octet-stream` for any other.
    public static func contentType(forExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "heic": return "image/heic"
        case "svg": return "image/svg+xml"
        case "pdf": return "application/pdf"
        case "json": return "application/json"
        case "zip": return "application/zip"
        case "txt": return "text/plain; charset=utf-8"
        case "csv": return "text/csv; charset=utf-8"
        case "html", "htm": return "text/html; charset=utf-8"
        case "xml": return "application/xml"
        case "mp3": return "audio/mpeg"
        case "m4a": return "audio/mp4"
        case "wav": return "audio/wav"
        case "mp4": return "video/mp4"
        case "mov": return "video/quicktime"
        default: return "application/octet-stream"
        }
    }
}

// MARK: - Encoding

extension MultipartForm {
    /// The `Content-Type` of a form sent with `boundary`.
    static func contentType(boundary: String) -> String {
        "multipart/form-data; boundary=\(boundary)"
    }

    /// A new random boundary: 32 hex digits after a fixed prefix (70 characters at most, RFC 2046).
    static func makeBoundary() -> String {
        "networking." + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// Throws ``NetworkError/invalidRequest(field:reason:)`` for a name, file name or header that would
    /// corrupt the framing, or a file that cannot be read.
    func validate() throws {
        for (index, part) in parts.enumerated() {
            let field = "multipart part \(index + 1)"
            guard Self.isSafeParameter(part.name) else {
                throw NetworkError.invalidRequest(field: "\(field)'s name", reason: "has CR, LF or NUL")
            }
            if let filename = part.filename, !Self.isSafeParameter(filename) {
                throw NetworkError.invalidRequest(field: "\(field)'s file name", reason: "has CR, LF or NUL")
            }
            if let type = part.contentType, !WireValidation.isFieldValue(type) {
                throw NetworkError.invalidRequest(field: "\(field)'s content type", reason: "has CR, LF, NUL or another control character")
            }
            do {
                try WireValidation.check(headers: part.headers)
            } catch {
                throw NetworkError.invalidRequest(field: "\(field)'s headers", reason: "a name or value has CR, LF, NUL or a byte a header cannot hold")
            }
            if case .file(let url) = part.content, RequestBody.sizeOfReadableRegularFile(url) == nil {
                throw NetworkError.invalidRequest(field: "\(field)'s file", reason: "does not exist, is not a regular file or cannot be read")
            }
        }
    }

    /// A name or file name fits a quoted parameter when it has no CR, LF or NUL; `"` is sent as `%22`.
    private static func isSafeParameter(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "%22") + "\""
    }

    /// The header block of `part`, from its opening boundary line to the blank line.
    private func head(of part: Part, boundary: String, first: Bool) -> Data {
        var text = (first ? "" : "\r\n") + "--\(boundary)\r\nContent-Disposition: form-data; name=\(Self.quoted(part.name))"
        if let filename = part.filename { text += "; filename=\(Self.quoted(filename))" }
        text += "\r\n"
        if let type = part.contentType { text += "Content-Type: \(type)\r\n" }
        for (name, value) in part.headers.sorted(by: { $0.key < $1.key }) {
            let lowered = name.lowercased()
            guard lowered != "content-type", lowered != "content-disposition" else { continue }
            text += "\(name): \(value)\r\n"
        }
        return Data((text + "\r\n").utf8)
    }

    private func tail(boundary: String) -> Data {
        Data((parts.isEmpty ? "--\(boundary)--\r\n" : "\r\n--\(boundary)--\r\n").utf8)
    }

    /// The whole body in memory, with a boundary found in none of the parts. Only for forms without files.
    func encodedInMemory() throws -> (data: Data, contentType: String) {
        try validate()
        var boundary = Self.makeBoundary()
        while parts.contains(where: { if case .data(let bytes) = $0.content { bytes.range(of: Data(boundary.utf8)) != nil } else { false } }) {
            boundary = Self.makeBoundary()
        }
        var body = Data()
        for (index, part) in parts.enumerated() {
            body.append(head(of: part, boundary: boundary, first: index == 0))
            if case .data(let bytes) = part.content { body.append(bytes) }
        }
        body.append(tail(boundary: boundary))
        return (body, Self.contentType(boundary: boundary))
    }

    /// Writes the whole body to a new file at `destination`, reading files 64 KB at a time, and returns
    /// its content type and length. If the boundary turns up inside a part, starts again with another.
    ///
    /// The copy runs on a dispatch queue of its own (``BlockingFileWork``), not on the calling task's
    /// thread: a large file would otherwise hold one of the few threads of Swift's cooperative pool for the
    /// whole copy. Cancelling the calling task stops it before the next 64 KB block, removes the partial file
    /// and throws ``NetworkError/cancelled``; any other failure removes it too. `afterBlock` is told the
    /// bytes written so far after each block of a file part (tests).
    func spool(to destination: URL, afterBlock: (@Sendable (Int64) -> Void)? = nil) async throws -> (contentType: String, length: Int64) {
        try validate()
        do {
            return try await BlockingFileWork.run { cancellation in
                while true {
                    let boundary = Self.makeBoundary()
                    if let length = try write(to: destination, boundary: boundary, isCancelled: { cancellation.isCancelled }, afterBlock: afterBlock) {
                        return (Self.contentType(boundary: boundary), length)
                    }
                }
            }
        } catch {
            try? FileManager.default.removeItem(at: destination)   // our partial copy
            throw error
        }
    }

    /// The body written with `boundary`, or `nil` when a part contains it. Stops with
    /// ``NetworkError/cancelled`` when `isCancelled` says so, checked before each 64 KB block of a file.
    func write(
        to destination: URL, boundary: String, isCancelled: () -> Bool = { Task.isCancelled }, afterBlock: ((Int64) -> Void)? = nil
    ) throws -> Int64? {
        let marker = Data(boundary.utf8)
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw NetworkError.encodingFailed(CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path]))
        }
        do {
            let output = try FileHandle(forWritingTo: destination)
            defer { try? output.close() }   // the bytes were written; a failed close loses nothing here
            var length: Int64 = 0
            func append(_ bytes: Data) throws {
                try output.write(contentsOf: bytes)
                length += Int64(bytes.count)
            }
            for (index, part) in parts.enumerated() {
                try append(head(of: part, boundary: boundary, first: index == 0))
                switch part.content {
                case .data(let bytes):
                    guard bytes.range(of: marker) == nil else { return nil }
                    try append(bytes)
                case .file(let url):
                    let input = try FileHandle(forReadingFrom: url)
                    defer { try? input.close() }   // read-only: closing cannot lose data
                    var carry = Data()   // the end of the previous chunk, to find a boundary split across two
                    while let chunk = try input.read(upToCount: 64 * 1_024), !chunk.isEmpty {
                        if isCancelled() { throw NetworkError.cancelled }   // a large copy stops with its call
                        guard (carry + chunk).range(of: marker) == nil else { return nil }
                        try append(chunk)
                        afterBlock?(length)
                        carry = chunk.suffix(marker.count - 1)
                    }
                }
            }
            try append(tail(boundary: boundary))
            return length
        } catch let error as NetworkError {
            throw error
        } catch {
            throw NetworkError.encodingFailed(error)
        }
    }
}
