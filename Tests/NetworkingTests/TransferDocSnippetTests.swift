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
