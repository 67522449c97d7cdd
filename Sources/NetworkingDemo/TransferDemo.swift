import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A multipart upload, a download with a progress bar, a download that drops at 60 % and resumes, and a
/// streamed reply, all through the mock.
enum TransferDemo {
    enum FilesAPI: Endpoint {
        case uploadAvatar(nickname: String, photo: URL)
        case download(name: String)
        case chat(question: String)

        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String {
            switch self {
            case .uploadAvatar: return "/me/avatar"
            case .download(let name): return "/files/\(name)"
            case .chat: return "/chat"
            }
        }
        var method: HTTPMethod {
            if case .uploadAvatar = self { return .post }
            return .get
        }
        var queryItems: [URLQueryItem] {
            guard case .chat(let question) = self else { return [] }
            return [URLQueryItem(name: "q", value: question)]
        }
        var body: RequestBody {
            guard case .uploadAvatar(let nickname, let photo) = self else { return .none }
            return .multipart(MultipartForm([.text("nickname", nickname), .file("photo", at: photo)]))
        }
    }

    static func run() async throws {
        let server = MockServer()
        let provider = server.makeProvider()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }   // the demo's scratch folder

        print("== Upload a profile photo (multipart, streamed from disk)")
        let photo = folder.appendingPathComponent("avatar.jpg")
        try Data(repeating: 0xFF, count: 300_000).write(to: photo)
        server.stub(.post, "/v1/me/avatar") { request in
            let parts = try request.multipartParts()
            print(
                "server   read "
                    + parts.map { part in
                        let file = part.filename.map { " (\($0), \(part.contentType ?? "no type"))" } ?? ""
                        return "\(part.name)\(file): \(part.filename == nil ? "\"\(part.text)\"" : "\(part.data.count) bytes")"
                    }.joined(separator: ", "))
            return .status(201)
        }
        let (uploadProgress, uploadReporter) = TransferProgress.makeStream()
        async let uploaded = provider.upload(FilesAPI.uploadAvatar(nickname: "홍길동", photo: photo), progress: uploadReporter)
        for await step in uploadProgress { draw(step, label: "upload  ") }
        print("\nuploaded → \(try await uploaded.statusCode)")
        print()

        print("== Download a file with a progress bar")
        let chunks = (0..<16).map { _ in Data(repeating: 0x2A, count: 32 * 1_024) }
        server.stub(.get, "/v1/files/report.pdf", .chunked(chunks, interval: 0.02, headers: ["Content-Length": String(16 * 32 * 1_024)]))
        let destination = folder.appendingPathComponent("report.pdf")
        let (downloadProgress, downloadReporter) = TransferProgress.makeStream()
        async let downloaded = provider.download(FilesAPI.download(name: "report.pdf"), to: destination, progress: downloadReporter)
        for await step in downloadProgress { draw(step, label: "download") }
        _ = try await downloaded
        let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int ?? 0
        print("\nsaved    \(destination.lastPathComponent), \(size / 1_024) KB")
        print()

        try await resumeDemo(server: server, folder: folder)

        print("== A reply streamed as Server-Sent Events")
        let tokens = ["Hello", ", ", "I am", " streamed", " token", " by", " token", "."]
        server.stub(
            .get, "/v1/chat",
            .chunked(
                tokens.map { "event: token\ndata: \($0)\n\n" } + ["event: done\ndata: {}\n\n"], interval: 0.05,
                headers: ["Content-Type": "text/event-stream"]))
        let stream = try await provider.stream(FilesAPI.chat(question: "Who are you?"))
        print("status   \(stream.response.statusCode), \(stream.response.value(forHTTPHeaderField: "Content-Type") ?? "")")
        print("reply    ", terminator: "")
        for try await event in stream.events {
            if event.event == "done" { break }
            print(event.data, terminator: "")
            fflush(nil)   // all streams: `stdout` itself is not concurrency-safe to name
        }
        print()
        print()
    }

    /// A 512 KB download whose connection drops at 60 %: the retry asks only for the rest and appends it.
    private static func resumeDemo(server: MockServer, folder: URL) async throws {
        print("== A download that drops at 60 % and resumes")
        let body = Data((0..<(512 * 1_024)).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 7 &+ index >> 10) })
        let dropAt = body.count * 6 / 10
        let sent = ByteCounter()
        server.stub(.get, "/v1/files/map.pack") { request in
            let range = request.header("Range")
            let ifRange = request.header("If-Range")
            print("\nserver   GET \(request.path)  Range: \(range ?? "-")  If-Range: \(ifRange ?? "-")")
            let headers = ["ETag": "\"map-v7\"", "Content-Type": "application/octet-stream"]
            if let range, range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()), ifRange == "\"map-v7\"" {
                let rest = body.suffix(from: start)
                sent.add(rest.count)
                print("server   206 Partial Content, bytes \(start)-\(body.count - 1)/\(body.count): \(rest.count / 1_024) KB")
                return .chunked(
                    stride(from: start, to: body.count, by: 32 * 1_024).map { body.subdata(in: $0..<min($0 + 32 * 1_024, body.count)) },
                    interval: 0.02, statusCode: 206,
                    headers: headers.merging(["Content-Range": "bytes \(start)-\(body.count - 1)/\(body.count)", "Content-Length": String(rest.count)]) { $1 })
            }
            sent.add(dropAt)
            print("server   200 OK, \(body.count / 1_024) KB declared; the connection drops after \(dropAt / 1_024) KB")
            return .chunked(
                stride(from: 0, to: dropAt, by: 32 * 1_024).map { body.subdata(in: $0..<min($0 + 32 * 1_024, dropAt)) }, interval: 0.02,
                headers: headers.merging(["Content-Length": String(body.count)]) { $1 }, failingWith: URLError(.networkConnectionLost))
        }
        let provider = server.makeProvider(interceptor: RetryPolicy(exponentialBackoffScale: 0.1))
        let destination = folder.appendingPathComponent("map.pack")
        let (progress, reporter) = TransferProgress.makeStream()
        async let downloaded = provider.download(FilesAPI.download(name: "map.pack"), to: destination, progress: reporter)
        for await step in progress { draw(step, label: "download") }
        let status = try await downloaded.statusCode
        let saved = try Data(contentsOf: destination)
        print("\nsaved    \(destination.lastPathComponent), \(saved.count / 1_024) KB (last answer \(status)), identical to the server's: \(saved == body)")
        print("server   sent \(sent.total / 1_024) KB in all for a \(body.count / 1_024) KB file")
        print()
    }

    /// Counts the bytes the demo's server sends.
    private final class ByteCounter: @unchecked Sendable {
        // @unchecked: `count` is guarded by `lock`.
        private let lock = NSLock()
        private var count = 0

        func add(_ bytes: Int) {
            lock.lock()
            defer { lock.unlock() }
            count += bytes
        }

        var total: Int {
            lock.lock()
            defer { lock.unlock() }
            return count
        }
    }

    /// Redraws a progress bar on the current terminal line.
    private static func draw(_ progress: TransferProgress, label: String) {
        let fraction = progress.fraction ?? 0
        let filled = Int(fraction * 30)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
        let total = progress.totalBytes.map { "\($0 / 1_024) KB" } ?? "?"
        print("\r\(label) [\(bar)] \(String(format: "%3d", Int(fraction * 100)))%  \(progress.completedBytes / 1_024) of \(total)", terminator: "")
        fflush(nil)   // all streams: `stdout` itself is not concurrency-safe to name
    }
}
