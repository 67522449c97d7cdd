// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Transfers.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct UpdateProfile: Endpoint {
    let nickname: String
    let photo: URL
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/me/profile" }
    var method: HTTPMethod { .post }
    var body: RequestBody {
        .multipart(MultipartForm([
            .text("nickname", nickname),                      // a text field, UTF-8
            .file("photo", at: photo),                        // streamed from disk; image/jpeg from ".jpg"
            .data("meta", Data(#"{"v":1}"#.utf8), filename: "meta.json"),
        ]))
    }
}

func uploadPhoto(_ endpoint: UpdateProfile, with provider: NetworkProvider) async throws -> Response {
    let (progress, reporter) = TransferProgress.makeStream()
    async let response = provider.upload(endpoint, progress: reporter)
    for await step in progress {
        print("sent \(step.completedBytes) of \(step.totalBytes ?? 0) bytes")
    }
    return try await response
}

struct Report: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/reports/latest.pdf" }
    var deadline: TimeInterval? { 600 }                 // a large file may take a while
}

func downloadReport(to destination: URL, with provider: NetworkProvider) async throws {
    let (progress, reporter) = TransferProgress.makeStream()
    async let response = provider.download(Report(), to: destination, progress: reporter)
    for await step in progress {
        print("\(Int((step.fraction ?? 0) * 100)) %")
    }
    _ = try await response      // the file is at `destination`, whole
}

struct MapPack: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/maps/europe.pack" }
    var deadline: TimeInterval? { 3_600 }
}

func downloadMapPack(to destination: URL, with provider: NetworkProvider, keepingStateIn saved: URL) async throws {
    let resumable = try? JSONDecoder().decode(ResumableDownload.self, from: Data(contentsOf: saved))
    do {
        _ = try await provider.download(MapPack(), to: destination, resuming: resumable)
        try? FileManager.default.removeItem(at: saved)          // done: the partial file became `destination`
    } catch let interrupted as DownloadInterrupted {
        try JSONEncoder().encode(interrupted.resumable).write(to: saved)   // continue later, even after a relaunch
        throw interrupted.underlying                            // what the call failed with: offline, cancelled, …
    }
}

func giveUpMapPack(keptIn saved: URL) {
    if let data = try? Data(contentsOf: saved), let resumable = try? JSONDecoder().decode(ResumableDownload.self, from: data) {
        resumable.discard()                                     // removes the partial file
    }
    try? FileManager.default.removeItem(at: saved)
}

func makeOrderingProvider(auth: AuthInterceptor) -> NetworkProvider {
    let retry = RetryPolicy(idempotencyKeyHeader: "Idempotency-Key")
    return NetworkProvider(interceptor: Interceptor(adapters: [auth, retry], retriers: [auth, retry]))
}

struct ChatReply: Endpoint {
    let question: String
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/chat" }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "q", value: question)] }
}

func printReply(to question: String, with provider: NetworkProvider) async throws {
    let stream = try await provider.stream(ChatReply(question: question))
    for try await event in stream.events {
        if event.event == "done" { break }
        print(event.data, terminator: "")
    }
}

func testUploadAndStream(photoURL: URL) async throws {
    let server = MockServer()
    server.stub(.post, "/v1/me/profile", .status(204))
    server.stub(.get, "/v1/chat", .chunked(["data: Hel", "lo\n\n", "event: done\ndata: {}\n\n"], interval: 0.01,
                                           headers: ["Content-Type": "text/event-stream"]))
    let provider = server.makeProvider()

    _ = try await provider.response(UpdateProfile(nickname: "Kim", photo: photoURL))
    let parts = try server.requests[0].multipartParts()
    #expect(parts.map(\.name) == ["nickname", "photo", "meta"])

    let stream = try await provider.stream(ChatReply(question: "hi"))
    var reply = ""
    for try await event in stream.events where event.event == "message" { reply += event.data }
    #expect(reply == "Hello")
}

@Suite("Docs/Transfers.md snippets")
struct TransferDocSnippetTests {
    private func scratchPhoto() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("doc-photo-\(UUID().uuidString).jpg")
        try Data(repeating: 0xD8, count: 10_000).write(to: url)
        return url
    }

    @Test func theProfileFormUploadsWithProgressToTheWholeSize() async throws {
        let photo = try scratchPhoto()
        defer { try? FileManager.default.removeItem(at: photo) }
        let server = MockServer()
        server.stub(.post, "/v1/me/profile", .status(204))
        let response = try await uploadPhoto(UpdateProfile(nickname: "Kim", photo: photo), with: server.makeProvider())
        #expect(response.statusCode == 204)
        let parts = try server.requests[0].multipartParts()
        #expect(parts.map(\.name) == ["nickname", "photo", "meta"])
        #expect(parts[1].contentType == "image/jpeg")
        #expect(parts[2].contentType == "application/json")
    }

    @Test func theReportDownloadsToItsDestination() async throws {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("doc-report-\(UUID().uuidString).pdf")
        defer { try? FileManager.default.removeItem(at: destination) }
        let server = MockServer()
        server.stub(.get, "/v1/reports/latest.pdf", .chunked([Data(count: 1_000), Data(count: 1_000)], headers: ["Content-Length": "2000"]))
        try await downloadReport(to: destination, with: server.makeProvider())
        #expect(try Data(contentsOf: destination).count == 2_000)
    }

    @Test func theMapPackKeepsItsStateThroughADropAndFinishesWhole() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(20_000)
        let file = ServedFile(body, drops: [12_000])
        let server = MockServer()
        server.stub(.get, "/v1/maps/europe.pack") { file.response(to: $0) }
        let (destination, saved) = (folder.appendingPathComponent("europe.pack"), folder.appendingPathComponent("europe.resume"))
        await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
            try await downloadMapPack(to: destination, with: server.makeProvider(), keepingStateIn: saved)
        }
        #expect(FileManager.default.fileExists(atPath: saved.path))
        try await downloadMapPack(to: destination, with: server.makeProvider(), keepingStateIn: saved)
        #expect(server.requests.last?.header("Range") == "bytes=12000-")
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["europe.pack"])
    }

    @Test func givingUpTheMapPackRemovesItsPartialFile() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(20_000), drops: [12_000])
        let server = MockServer()
        server.stub(.get, "/v1/maps/europe.pack") { file.response(to: $0) }
        let saved = folder.appendingPathComponent("europe.resume")
        _ = try? await downloadMapPack(to: folder.appendingPathComponent("europe.pack"), with: server.makeProvider(), keepingStateIn: saved)
        #expect(try folderContents(folder).count == 2)   // the stored state and the partial file
        giveUpMapPack(keptIn: saved)
        #expect(try folderContents(folder).isEmpty)
    }

    @Test func theOrderingProviderRetriesAPOSTWithOneKey() async throws {
        let api = MockAuthServer(accessTokenIsValid: true)
        let auth = api.makeInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let chain = try #require(makeOrderingProvider(auth: auth).interceptor)
        api.mock.stub(.post, "/v1/orders", .status(503), .status(201))
        let provider = api.mock.makeProvider(interceptor: chain, sleep: RecordedDelays().sleep)
        let response = try await provider.response(TestEndpoint(baseURL: api.baseURL, path: "/orders", method: .post))
        #expect(response.statusCode == 201)
        let sent = api.mock.requests(.post, "/v1/orders")
        #expect(sent.count == 2)
        #expect(sent[0].header("Idempotency-Key") != nil && sent[0].header("Idempotency-Key") == sent[1].header("Idempotency-Key"))
        #expect(sent.allSatisfy { $0.header("Authorization") == "Bearer access-0" })
    }

    @Test func theReplyStreamsUntilDone() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/chat", .chunked(["data: a\n\n", "event: done\ndata: {}\n\n", "data: never\n\n"]))
        try await printReply(to: "hi", with: server.makeProvider())
        #expect(server.requests.first?.query("q") == "hi")
    }

    @Test func theTestingSnippetRuns() async throws {
        let photo = try scratchPhoto()
        defer { try? FileManager.default.removeItem(at: photo) }
        try await testUploadAndStream(photoURL: photo)
    }
}
