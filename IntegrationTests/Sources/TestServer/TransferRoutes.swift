import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import MultipartKit
import NIOCore

/// Transfer endpoints, all behind the bearer token (401 without a valid one):
/// - `POST /upload/multipart` → the parts as multipart-kit's parser read them from the streamed body:
///   `{"parts":[{"name","filename","contentType","size","checksum","text"}]}` (`text` for parts under 1 KB)
/// - `PUT /upload/raw` → `{"size","checksum","contentLength","transferEncoding","idempotencyKey"}` of the streamed body
/// - `PUT /upload/redirected` → 401 before reading the body when the token is not valid; else the body is read, then
///   `307` to `/upload/raw`
/// - `POST /upload/slow` → reads the body one buffer every 20 ms, then 204
/// - `GET /download?mb=N` → N MiB of a known pattern, with `Content-Length`; `&chunked=1` without it
/// - `GET /download/slow?chunks=N&ms=M` → N chunks of 64 KiB, M ms apart
/// - `GET /events?count=N&ms=M` → `text/event-stream`: event 1, then (once `POST /events/open` was called,
///   or after 5 s) events 2…N, M ms apart
/// No body is held whole: the server's memory stays flat however large the transfer.
extension TestServer {
    /// Byte `offset` of every download: each 64 KiB block is filled with its own index mod 251, so a
    /// missing, repeated or reordered block shows.
    public static func downloadByte(at offset: Int) -> UInt8 {
        UInt8((offset >> 16) % 251)
    }

    /// The size and SHA-256 of a byte stream, fed in pieces.
    public struct Checksum {
        private var hasher = SHA256()
        public private(set) var count = 0
        public init() {}
        public mutating func add(_ buffer: ByteBuffer) {
            buffer.withUnsafeReadableBytes { raw in
                count += raw.count
                hasher.update(bufferPointer: raw)
            }
        }

        public mutating func add(_ data: Data) {
            data.withUnsafeBytes { raw in
                count += raw.count
                hasher.update(bufferPointer: raw)
            }
        }

        /// The size and digest of a file, read 1 MiB at a time.
        public static func of(file: URL) throws -> (size: Int, hex: String) {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            var checksum = Checksum()
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { checksum.add(chunk) }
            return (checksum.count, checksum.hex())
        }
        /// The digest in hex (ends the hashing: call once).
        public func hex() -> String {
            hasher.finalize().map { String(format: "%02x", $0) }.joined()
        }
    }

    static func addTransferRoutes(to router: Router<BasicRequestContext>, state: AuthState) {
        router.post("/upload/multipart") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            guard let type = request.headers[.contentType], let boundary = parameter("boundary", in: type) else {
                return json(["error": "no boundary"], status: .badRequest)
            }
            let reader = PartReader(boundary: boundary)
            for try await buffer in request.body { try reader.parser.execute(buffer) }
            return json(["parts": reader.parts])
        }
        router.put("/upload/raw") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            var checksum = Checksum()
            for try await buffer in request.body { checksum.add(buffer) }
            return json([
                "size": checksum.count, "checksum": checksum.hex(),
                "contentLength": request.headers[.contentLength] ?? "",
                "transferEncoding": request.headers[.transferEncoding] ?? "",
                "idempotencyKey": HTTPField.Name("Idempotency-Key").flatMap { request.headers[$0] } ?? "",
            ])
        }
        router.put("/upload/redirected") { request, _ -> Response in
            // 401 at once, before a byte of the body is read; with a valid token, the body is read whole, then 307.
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            for try await _ in request.body {}
            return Response(status: .temporaryRedirect, headers: [.location: "/upload/raw"])
        }
        router.post("/upload/single-part") { request, _ -> Response in
            // A form of one part, too large for multipart-kit's parser in a debug build: the part's bytes
            // are those between the first blank line and the closing delimiter, hashed as they stream.
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            guard let type = request.headers[.contentType], let boundary = parameter("boundary", in: type) else {
                return json(["error": "no boundary"], status: .badRequest)
            }
            let closing = Array("\r\n--\(boundary)--\r\n".utf8)
            var head: [UInt8] = []
            var inBody = false
            var pending: [UInt8] = []
            var checksum = Checksum()
            for try await buffer in request.body {
                var bytes = Array(buffer.readableBytesView)
                if !inBody {
                    head += bytes
                    guard let blank = blankLine(in: head) else { continue }
                    inBody = true
                    bytes = Array(head[(blank + 4)...])
                    head = Array(head[..<blank])
                }
                pending += bytes
                if pending.count > closing.count {
                    checksum.add(Data(pending[..<(pending.count - closing.count)]))
                    pending.removeFirst(pending.count - closing.count)
                }
            }
            guard pending == closing else { return json(["error": "no closing delimiter"], status: .badRequest) }
            let headText = String(decoding: head, as: UTF8.self)
            return json([
                "size": checksum.count, "checksum": checksum.hex(), "contentLength": request.headers[.contentLength] ?? "",
                "opensWithBoundary": headText.hasPrefix("--\(boundary)\r\n"),
            ])
        }
        router.post("/upload/slow") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            for try await _ in request.body { try await Task.sleep(nanoseconds: 20_000_000) }
            return Response(status: .noContent)
        }
        router.get("/download") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            let megabytes = Int(request.uri.queryParameters["mb"].map(String.init) ?? "") ?? 1
            let chunked = request.uri.queryParameters["chunked"] == "1"
            let total = megabytes << 20
            let write: @Sendable (inout any ResponseBodyWriter) async throws -> Void = { writer in
                var offset = 0
                while offset < total {
                    let count = min(1 << 16, total - offset)
                    let start = offset
                    try await writer.write(ByteBuffer(repeating: downloadByte(at: start), count: count))
                    offset += count
                }
                try await writer.finish(nil)
            }
            let body = chunked ? ResponseBody(write) : ResponseBody(contentLength: total, write)
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
        }
        router.get("/download/slow") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            let chunks = Int(request.uri.queryParameters["chunks"].map(String.init) ?? "") ?? 100
            let milliseconds = UInt64(request.uri.queryParameters["ms"].map(String.init) ?? "") ?? 100
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: chunks << 16) { writer in
                    for _ in 0..<chunks {
                        try await writer.write(ByteBuffer(repeating: 0x5A, count: 1 << 16))
                        try await Task.sleep(nanoseconds: milliseconds * 1_000_000)
                    }
                    try await writer.finish(nil)
                })
        }
        router.post("/events/open") { _, _ -> Response in
            await state.openEventGate()
            return Response(status: .noContent)
        }
        router.get("/events") { request, _ -> Response in
            guard let token = bearerToken(of: request), await state.isValid(accessToken: token) else { return Response(status: .unauthorized) }
            let count = Int(request.uri.queryParameters["count"].map(String.init) ?? "") ?? 3
            let milliseconds = UInt64(request.uri.queryParameters["ms"].map(String.init) ?? "") ?? 50
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: ": hello\nid: 1\nevent: tick\ndata: 1\n\n"))
                    for _ in 0..<500 where !(await state.isEventGateOpen) { try await Task.sleep(nanoseconds: 10_000_000) }
                    await state.recordEventGatePassed()
                    for index in 2...max(2, count) {
                        try await Task.sleep(nanoseconds: milliseconds * 1_000_000)
                        try await writer.write(ByteBuffer(string: "id: \(index)\nevent: tick\ndata: \(index)\ndata: 한글 😀\n\n"))
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// Where the first CRLF CRLF starts in `bytes`.
    private static func blankLine(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// A `name=value` or `name="value"` parameter of a header value.
    static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "="), pair[..<equals].lowercased() == name else { continue }
            let raw = pair[pair.index(after: equals)...]
            return raw.count >= 2 && raw.hasPrefix("\"") && raw.hasSuffix("\"") ? String(raw.dropFirst().dropLast()) : String(raw)
        }
        return nil
    }
}

/// Collects what multipart-kit's streaming parser reports, part by part, without keeping the bodies.
private final class PartReader {
    let parser: MultipartParser
    private(set) var parts: [[String: Any]] = []
    private var headers: [String: String] = [:]
    private var checksum = TestServer.Checksum()
    private var text = Data()

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in headers[name.lowercased()] = value }
        parser.onBody = { [unowned self] buffer in
            checksum.add(buffer)
            if text.count < 1_024 { text.append(contentsOf: buffer.readableBytesView.prefix(1_024 - text.count)) }
        }
        parser.onPartComplete = { [unowned self] in
            let disposition = headers["content-disposition"] ?? ""
            parts.append([
                "name": TestServer.parameter("name", in: disposition) ?? "",
                "filename": TestServer.parameter("filename", in: disposition) ?? "",
                "contentType": headers["content-type"] ?? "",
                "size": checksum.count,
                "checksum": checksum.hex(),
                "text": checksum.count < 1_024 ? String(decoding: text, as: UTF8.self) : "",
            ])
            headers = [:]
            checksum = TestServer.Checksum()
            text = Data()
        }
    }
}
