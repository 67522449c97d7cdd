import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download endpoint with its own limits.
struct FileDownload: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/files/big.bin"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var maximumResponseSize: Int?
}

/// A file served through the mock the way a server that supports `Range` and `If-Range` serves it, with a
/// connection that drops where a test says, and a count of the body bytes it sent.
final class ServedFile: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`.

    /// What the server does with a request that has a `Range`.
    enum RangeHandling: Sendable {
        /// Serves the rest when `If-Range` matches, else the whole body (RFC 9110 §13.1.5); 416 past the end.
        case honours
        /// Always the whole body with 200.
        case ignores
        /// Always 416.
        case refuses
        /// A 206 whose `Content-Range` starts at this offset, whatever was asked.
        case startsAt(Int)
        /// The rest of the file as it is now (206), whatever `If-Range` says: a server that ignores
        /// `If-Range` (RFC 9110 §13.1.5 says it must not).
        case ignoresIfRange
        /// Honours `If-Range`, but a 206 holds at most this many bytes (RFC 9110 §14.4 lets a server send
        /// less than asked); its `Content-Range` declares the complete length, or `*` without `declaresTotal`.
        case caps(Int, declaresTotal: Bool)
    }

    private let lock = NSLock()
    private var versions: [(body: Data, headers: [String: String])]
    private var version = 0
    private var drops: [Int?]
    private var served = 0
    private var sent = 0
    let handling: RangeHandling
    let chunkSize: Int
    let interval: TimeInterval
    /// How a drop fails the request.
    let failure: URLError
    /// Whether the first answer declares its length (`Content-Length`); a 206 always does.
    let declaresLength: Bool

    /// A file of `body` with `headers` (its validators); request *i* drops after `drops[i]` bytes of the
    /// file (an offset into the whole body; `nil` or past the list: no drop), failing with `failure`.
    init(
        _ body: Data, headers: [String: String] = ["ETag": "\"v1\""], drops: [Int?] = [], handling: RangeHandling = .honours,
        chunkSize: Int = 1_000, interval: TimeInterval = 0, failure: URLError = URLError(.networkConnectionLost), declaresLength: Bool = true
    ) {
        self.versions = [(body, headers)]
        self.drops = drops
        self.handling = handling
        self.chunkSize = chunkSize
        self.interval = interval
        self.failure = failure
        self.declaresLength = declaresLength
    }

    /// From the next request on, the file is `body` with `headers`.
    func change(to body: Data, headers: [String: String]) {
        lock.lock()
        defer { lock.unlock() }
        versions.append((body, headers))
        version = versions.count - 1
    }

    /// The body bytes sent so far, over every request.
    var bytesSent: Int {
        lock.lock()
        defer { lock.unlock() }
        return sent
    }

    /// Answers `request` as the server would.
    func response(to request: RecordedRequest) -> MockResponse {
        lock.lock()
        defer { lock.unlock() }
        let (body, headers) = versions[version]
        let drop = served < drops.count ? drops[served] : nil
        served += 1
        var start = 0
        var status = 200
        var fields = headers
        var last = body.count - 1
        var complete = String(body.count)
        if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
            let asked = Int(range.dropFirst(6).dropLast())
        {
            let validator = headers["ETag"] ?? headers["Last-Modified"]
            switch handling {
            case .honours where request.header("If-Range") == nil || request.header("If-Range") == validator:
                guard asked < body.count else { return MockResponse(statusCode: 416, headers: ["Content-Range": "bytes */\(body.count)"]) }
                (start, status) = (asked, 206)
            case .honours, .ignores:
                break
            case .refuses:
                return MockResponse(statusCode: 416, headers: ["Content-Range": "bytes */\(body.count)"])
            case .startsAt(let offset):
                (start, status) = (offset, 206)
            case .ignoresIfRange:
                guard asked < body.count else { return MockResponse(statusCode: 416, headers: ["Content-Range": "bytes */\(body.count)"]) }
                (start, status) = (asked, 206)
            case .caps(let most, let declaresTotal) where request.header("If-Range") == nil || request.header("If-Range") == validator:
                guard asked < body.count else { return MockResponse(statusCode: 416, headers: ["Content-Range": "bytes */\(body.count)"]) }
                (start, status) = (asked, 206)
                last = min(body.count, asked + most) - 1
                if !declaresTotal { complete = "*" }
            case .caps:
                break
            }
        }
        if status == 206 { fields["Content-Range"] = "bytes \(start)-\(last)/\(complete)" }
        if declaresLength || status == 206 { fields["Content-Length"] = String(last + 1 - start) }
        let end = min(last + 1, drop.map { max($0, start) } ?? last + 1)
        var chunks: [Data] = []
        var offset = start
        while offset < end {
            let next = min(offset + chunkSize, end)
            chunks.append(body.subdata(in: offset..<next))
            offset = next
        }
        sent += end - start
        return .chunked(
            chunks, interval: interval, statusCode: status, headers: fields, failingWith: end < last + 1 ? failure : nil)
    }
}

/// `count` bytes that differ from position to position (`seed` makes another file of the same size).
func fileBody(_ count: Int, seed: UInt8 = 0) -> Data {
    Data((0..<count).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) ^ seed })
}

/// The names in `folder`, sorted.
func folderContents(_ folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
}

/// A retry policy that retries at once (its delays are recorded, never waited for).
func immediateRetries(limit: Int = 2) -> RetryPolicy {
    RetryPolicy(retryLimit: limit, random: { 1 })
}
