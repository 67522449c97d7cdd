import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /resume/{key}`: a file that supports `Range: bytes=N-` and `If-Range` (RFC 9110 §14), served in
/// 64 KiB writes, with connections that drop on purpose. Each key is its own file; ``TestServer/resumeLog``
/// counts the body bytes sent for it and records each request's range headers and answer. Query:
/// - `size=N`: the file's length in bytes (1 MiB by default); its bytes are ``TestServer/resumeByte(at:seed:version:)``
/// - `seed=N`: which content (0 by default)
/// - `drops=A,B,…`: request *i* (from 0) closes the connection once the file's offset `drops[i]` is
///   reached (an empty entry, or past the list: no drop)
/// - `validator=etag|modified|weak|none`: a strong `ETag` (default), only a `Last-Modified` long before
///   the `Date`, a weak `ETag`, or neither
/// - `range=ignores`: every answer is the whole file with 200, whatever the request asks
/// - `range=ignoresIfRange`: a range is served (206) whatever `If-Range` says, from the file as it is now
///   (RFC 9110 §13.1.5 forbids it: with `changes=1`, the 206 is the rest of another version)
/// - `cap=N`: a 206 holds at most N bytes (RFC 9110 §14.4 lets a server send less than asked), its
///   `Content-Range` `bytes A-B/size`, or `bytes A-B/*` with `total=unknown`
/// - `length=chunked`: a 200 is sent chunked, without `Content-Length` (a 206 always declares it)
/// - `changes=1`: the file is replaced after every request (a new version: other bytes, another validator)
/// - `ms=N`: a pause of N ms after each write (a download slow enough to be cancelled)
/// Nothing is held whole: the server's memory stays flat however large the file.
extension TestServer {
    /// What every `/resume` file was asked and answered, by key.
    public static let resumeLog = ResumeLog()

    /// The bytes of the resume files: a table of 65,521 varied bytes (a prime, so no 64 KiB write repeats
    /// another's bytes), read from an offset that depends on the seed and the version.
    private static let resumeTable: [UInt8] = {
        var state: UInt32 = 0x9E37_79B9
        return (0..<65_521).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }()

    /// Byte `offset` of the `/resume` file of `seed` in its `version`.
    public static func resumeByte(at offset: Int, seed: Int = 0, version: Int = 0) -> UInt8 {
        resumeTable[(offset + seed &* 7_919 + version &* 104_729) % resumeTable.count]
    }

    /// `count` bytes of the `/resume` file of `seed` in its `version`, from `offset`.
    public static func resumeBytes(from offset: Int, count: Int, seed: Int = 0, version: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var start = (offset + seed &* 7_919 + version &* 104_729) % resumeTable.count
        while bytes.count < count {
            let run = min(count - bytes.count, resumeTable.count - start)
            bytes += resumeTable[start..<(start + run)]
            start = 0
        }
        return bytes
    }

    /// The size and SHA-256 of the whole `/resume` file of `seed` in its `version`.
    public static func resumeChecksum(size: Int, seed: Int = 0, version: Int = 0) -> (size: Int, hex: String) {
        var checksum = Checksum()
        var offset = 0
        while offset < size {
            let count = min(1 << 20, size - offset)
            checksum.add(Data(resumeBytes(from: offset, count: count, seed: seed, version: version)))
            offset += count
        }
        return (checksum.count, checksum.hex())
    }

    static func addResumeRoutes(to router: Router<BasicRequestContext>) {
        router.get("/resume/:key") { request, context -> Response in
            let key = context.parameters.get("key") ?? ""
            let query = request.uri.queryParameters
            let size = Int(query["size"].map(String.init) ?? "") ?? 1 << 20
            let seed = Int(query["seed"].map(String.init) ?? "") ?? 0
            let pause = UInt64(query["ms"].map(String.init) ?? "") ?? 0
            let drops = (query["drops"].map(String.init) ?? "").split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            let changes = query["changes"] == "1"
            let index = await resumeLog.arrived(key)
            let version = changes ? index : 0
            var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
            let validator: String?
            switch query["validator"].map(String.init) ?? "etag" {
            case "modified":
                validator = "Sun, 06 Nov 1994 08:49:\(String(format: "%02d", version % 60)) GMT"
                headers[.lastModified] = validator
            case "weak":
                validator = nil
                headers[.eTag] = "W/\"\(seed)-v\(version)\""
            case "none":
                validator = nil
            default:
                validator = "\"\(seed)-v\(version)\""
                headers[.eTag] = validator
            }
            let range = request.headers[.range]
            let ifRange = request.headers[.ifRange]
            var start = 0
            var status = HTTPResponse.Status.ok
            let cap = Int(query["cap"].map(String.init) ?? "") ?? .max
            let ignoresIfRange = query["range"] == "ignoresIfRange"
            var end = size
            if query["range"] != "ignores", let range, range.hasPrefix("bytes="), range.hasSuffix("-"),
                let asked = Int(range.dropFirst(6).dropLast()), ifRange == nil || ifRange == validator || ignoresIfRange
            {
                guard asked < size else {
                    await resumeLog.answered(key, range: range, ifRange: ifRange, status: 416)
                    return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(size)"])
                }
                (start, status) = (asked, .partialContent)
                end = asked + min(cap, size - asked)
                let complete = query["total"] == "unknown" ? "*" : "\(size)"
                headers[.contentRange] = "bytes \(asked)-\(end - 1)/\(complete)"
            }
            await resumeLog.answered(key, range: range, ifRange: ifRange, status: status.code)
            let drop = index < drops.count ? drops[index] : nil
            let (first, last) = (start, end)
            let declared = status == .ok && query["length"] == "chunked" ? nil : last - first
            return Response(
                status: status, headers: headers,
                body: ResponseBody(contentLength: declared) { writer in
                    var offset = first
                    while offset < last {
                        if let drop, offset >= drop { throw CancellationError() }   // the connection closes mid-body
                        let count = min(1 << 16, last - offset, max(drop.map { $0 - offset } ?? .max, 1))
                        try await writer.write(ByteBuffer(bytes: resumeBytes(from: offset, count: count, seed: seed, version: version)))
                        await resumeLog.sent(count, for: key)
                        offset += count
                        if pause > 0 { try await Task.sleep(nanoseconds: pause * 1_000_000) }
                    }
                    try await writer.finish(nil)
                })
        }
    }
}

/// What the `/resume` files were asked and answered, and the body bytes sent, by key.
public actor ResumeLog {
    /// One request: its `Range` and `If-Range`, and the status answered.
    public struct Entry: Sendable, Equatable {
        public let range: String?
        public let ifRange: String?
        public let status: Int
    }

    private var requests: [String: [Entry]] = [:]
    private var arrivals: [String: Int] = [:]
    private var bytes: [String: Int] = [:]

    /// The requests for `key`, in order.
    public func entries(_ key: String) -> [Entry] { requests[key] ?? [] }

    /// The body bytes sent for `key`, over every request.
    public func bytesSent(_ key: String) -> Int { bytes[key] ?? 0 }

    /// The body bytes sent for all of `keys`.
    public func bytesSent(_ keys: [String]) -> Int { keys.reduce(0) { $0 + (bytes[$1] ?? 0) } }

    /// Counts a request for `key`; returns its index, from 0.
    func arrived(_ key: String) -> Int {
        defer { arrivals[key, default: 0] += 1 }
        return arrivals[key] ?? 0
    }

    func answered(_ key: String, range: String?, ifRange: String?, status: Int) {
        requests[key, default: []].append(Entry(range: range, ifRange: ifRange, status: status))
    }

    func sent(_ count: Int, for key: String) {
        bytes[key, default: 0] += count
    }
}
