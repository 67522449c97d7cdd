import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A repository as apps write one: it holds the protocol, never the provider, and transfers files and
/// streams through it.
private struct ReportRepository {
    let network: any NetworkProviding

    func upload(_ file: URL, progress: ProgressReporter? = nil) async throws -> Response {
        try await network.upload(TestEndpoint(path: "/reports", method: .post, body: .file(file, contentType: "text/csv")), progress: progress)
    }

    func download(to destination: URL, interceptor: (any RequestInterceptor)? = nil) async throws -> Response {
        try await network.download(TestEndpoint(path: "/reports/latest"), to: destination, interceptor: interceptor)
    }

    func lines() async throws -> (response: Response, lines: [String]) {
        let stream = try await network.stream(TestEndpoint(path: "/reports/feed"))
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        return (stream.response, lines)
    }
}

/// What the fake was asked for: one endpoint's method, path and body.
private struct AskedCall: Sendable {
    let method: HTTPMethod
    let path: String
    let body: RequestBody
}

/// A fake as apps wrote them before transfers were requirements: `request` and `response` only. Every
/// call answers `body` with `statusCode`, and is recorded.
private struct FakeNetwork: NetworkProviding {
    let body: Data
    var statusCode = 200
    let asked = Recorder<AskedCall>()

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try JSONDecoder().decode(type, from: try await response(endpoint, interceptor: interceptor).data)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        asked.append(AskedCall(method: endpoint.method, path: endpoint.path, body: endpoint.body))
        let url = endpoint.baseURL.appendingPathComponent(endpoint.path)
        guard let http = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: ["ETag": "\"v1\""]) else {
            throw URLError(.badServerResponse)
        }
        return Response(data: body, httpResponse: http, request: URLRequest(url: url))
    }
}

/// A fake whose every call fails with `error`.
private struct FailingNetwork: NetworkProviding {
    let error: URLError

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        throw error
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        throw error
    }
}

/// Every value of `progress`, once its call finished it.
private func values(of progress: AsyncStream<TransferProgress>) async -> [TransferProgress] {
    var seen: [TransferProgress] = []
    for await step in progress { seen.append(step) }
    return seen
}

/// A value an interrupted download kept, as an app decodes it from its storage.
private func savedDownload(url: String) throws -> ResumableDownload {
    let json = #"{"url":"\#(url)","validator":"\"v1\"","partialFile":"file:///tmp/.networking-none.download","bytesReceived":3,"totalBytes":10}"#
    return try JSONDecoder().decode(ResumableDownload.self, from: Data(json.utf8))
}

@Suite("NetworkProviding transfers", SuiteTimeLimit.oneMinute)
struct NetworkProvidingTransferTests {
    // MARK: A real provider behind the protocol

    @Test func aRepositoryUploadsAFileThroughARealProviderItHoldsAsTheProtocol() async throws {
        // GIVEN a repository holding a provider wired to a mock that stores reports, and a file to send
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("q3.csv")
        let bytes = Data("quarter,total\nq3,42\n".utf8)
        try bytes.write(to: file)
        let server = MockServer()
        server.stub(.post, "/v1/reports", MockResponse(statusCode: 201, body: Data("stored".utf8)))
        let repository = ReportRepository(network: server.makeProvider())
        // WHEN the repository uploads the file with a progress reporter
        let (progress, reporter) = TransferProgress.makeStream()
        let response = try await repository.upload(file, progress: reporter)
        // THEN the server received the file's bytes with their type, and the server's answer came back
        let request = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.body == bytes)
        #expect(request.header("Content-Type") == "text/csv")
        #expect(response.statusCode == 201)
        #expect(response.data == Data("stored".utf8))
        _ = await values(of: progress)   // and the progress stream was finished when the call ended
    }

    @Test func aRepositoryDownloadsThroughARealProviderWithItsPerCallInterceptor() async throws {
        // GIVEN a repository holding a provider wired to a mock that serves a report, and an old file; the
        // provider's size limit is below the body's size, which only a call gathered in memory obeys (a
        // download goes to disk: the provider's own download, not the protocol's default, must serve it)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.csv")
        try Data("old".utf8).write(to: destination)
        // `index: Int`: left to the literals, the compiler picks Int128, which needs macOS 15 / iOS 18
        let body = Data((0..<20_000).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 7) })
        let server = MockServer()
        server.stub(.get, "/v1/reports/latest", MockResponse(statusCode: 200, body: body))
        let repository = ReportRepository(network: server.makeProvider(maximumResponseSize: 1_000))
        // WHEN the repository downloads it with an interceptor of its own for this call
        let response = try await repository.download(to: destination, interceptor: HeaderAdapter(name: "X-Trace", value: "t-1"))
        // THEN the whole body is in the file, the response's data is empty, and the interceptor reached the server
        #expect(try Data(contentsOf: destination) == body)
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.csv"])
        let request = try #require(server.requests.first)
        #expect(request.method == "GET")
        #expect(request.header("X-Trace") == "t-1")
    }

    @Test func aRepositoryStreamsLinesThroughARealProvider() async throws {
        // GIVEN a repository holding a provider wired to a mock that sends a feed in chunks that split lines
        let server = MockServer()
        server.stub(.get, "/v1/reports/feed", .chunked(["first li", "ne\nsecond\r", "\nthird"], headers: ["Content-Type": "text/plain"]))
        let repository = ReportRepository(network: server.makeProvider())
        // WHEN the repository reads the stream's lines
        let (response, lines) = try await repository.lines()
        // THEN every line arrived whole, after a response whose status and headers came first
        #expect(lines == ["first line", "second", "third"])
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        #expect(server.requests.map(\.method) == ["GET"])
    }

    // MARK: A fake with only request and response

    @Test func aFakesDefaultDownloadWritesItsResponseDataToTheDestination() async throws {
        // GIVEN a fake that implements only request and response, held as the protocol, and an old file
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.csv")
        try Data("old contents, longer than the new".utf8).write(to: destination)
        let fake = FakeNetwork(body: Data("q3,42\n".utf8))
        let network: any NetworkProviding = fake
        // WHEN a file is downloaded through it with a progress reporter
        let (progress, reporter) = TransferProgress.makeStream()
        let response = try await network.download(TestEndpoint(path: "/reports/latest"), to: destination, progress: reporter)
        // THEN the file holds exactly the fake's data, nothing else is left, and the response is the fake's
        // without its data
        #expect(try Data(contentsOf: destination) == Data("q3,42\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.csv"])
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        // and the fake was asked once, for the endpoint; progress got every byte, then finished
        #expect(fake.asked.all.map(\.path) == ["/reports/latest"])
        #expect(await values(of: progress) == [TransferProgress(completedBytes: 6, totalBytes: 6)])
    }

    @Test func aFakesDefaultDownloadLeavesTheDestinationAsItWasOn304() async throws {
        // GIVEN a fake that answers 304 Not Modified, and the file an earlier download left
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.csv")
        try Data("kept".utf8).write(to: destination)
        let network: any NetworkProviding = FakeNetwork(body: Data(), statusCode: 304)
        // WHEN the file is downloaded again
        let response = try await network.download(TestEndpoint(path: "/reports/latest"), to: destination)
        // THEN the response says 304 and the file is untouched
        #expect(response.statusCode == 304)
        #expect(try Data(contentsOf: destination) == Data("kept".utf8))
    }

    @Test func aFakesDefaultDownloadChecksTheDestinationBeforeAskingTheFake() async throws {
        // GIVEN a fake, and a destination whose folder does not exist
        let fake = FakeNetwork(body: Data("x".utf8))
        let network: any NetworkProviding = fake
        let destination = FileManager.default.temporaryDirectory
            .appendingPathComponent("networking-tests-missing-\(UUID().uuidString)")
            .appendingPathComponent("f")
        // WHEN a download is asked for
        // THEN it throws the provider's typed error, and the fake was never asked
        await #expect(throws: NetworkError.invalidRequest(field: "download destination", reason: "is in a folder that does not exist or cannot be written")) {
            _ = try await network.download(TestEndpoint(path: "/reports/latest"), to: destination)
        }
        await #expect(throws: NetworkError.invalidRequest(field: "download destination", reason: "is not a file URL")) {
            _ = try await network.download(TestEndpoint(path: "/reports/latest"), to: try #require(URL(string: "https://example.com/f")))
        }
        #expect(fake.asked.count == 0)
    }

    @Test func aFakesErrorReachesTheDownloaderAndLeavesTheDestinationAlone() async throws {
        // GIVEN a fake whose calls fail, and an existing file
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.csv")
        try Data("kept".utf8).write(to: destination)
        let network: any NetworkProviding = FailingNetwork(error: URLError(.notConnectedToInternet))
        // WHEN a download and a stream are asked for
        // THEN both throw the fake's error, and the file is untouched
        await #expect(throws: URLError(.notConnectedToInternet)) {
            _ = try await network.download(TestEndpoint(path: "/reports/latest"), to: destination)
        }
        await #expect(throws: URLError(.notConnectedToInternet)) { _ = try await network.stream(TestEndpoint(path: "/reports/feed")) }
        #expect(try Data(contentsOf: destination) == Data("kept".utf8))
    }

    @Test func aFakesDefaultStreamYieldsItsResponseDataThenEnds() async throws {
        // GIVEN a fake whose response is two Server-Sent Events
        let body = Data("event: token\ndata: hel\n\nevent: token\ndata: lo\n\n".utf8)
        let fake = FakeNetwork(body: body)
        let network: any NetworkProviding = fake
        // WHEN its body is streamed, as chunks and as events
        var chunks: [Data] = []
        let stream = try await network.stream(TestEndpoint(path: "/chat"))
        for try await chunk in stream { chunks.append(chunk) }
        var events: [String] = []
        for try await event in try await network.stream(TestEndpoint(path: "/chat")).events { events.append(event.data) }
        // THEN the chunks are the fake's bytes, the events are parsed from them, and the response has no data
        #expect(chunks.reduce(Data(), +) == body)
        #expect(events == ["hel", "lo"])
        #expect(stream.response.statusCode == 200)
        #expect(stream.response.data.isEmpty)
        #expect(fake.asked.all.map(\.path) == ["/chat", "/chat"])
    }

    @Test func aFakesDefaultStreamOfAnEmptyBodyEndsAtOnce() async throws {
        // GIVEN a fake that answers 204 with no body
        let network: any NetworkProviding = FakeNetwork(body: Data(), statusCode: 204)
        // WHEN it is streamed
        let stream = try await network.stream(TestEndpoint(path: "/chat"))
        var chunks = 0
        for try await _ in stream { chunks += 1 }
        // THEN no chunk arrives and the stream ends normally
        #expect(chunks == 0)
        #expect(stream.response.statusCode == 204)
    }

    @Test func aFakesDefaultStreamIgnoresASmallerSizeLimitForABodyItAlreadyHolds() async throws {
        // GIVEN a fake body bigger than the endpoint's size limit, in one line
        struct SmallLimit: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/feed" }
            var maximumResponseSize: Int? { 4 }
        }
        let network: any NetworkProviding = FakeNetwork(body: Data("one long line".utf8))
        // WHEN its lines are read
        var lines: [String] = []
        for try await line in try await network.stream(SmallLimit()).lines { lines.append(line) }
        // THEN the whole body arrives, as the doc comment says
        #expect(lines == ["one long line"])
    }

    @Test func aFakesDefaultUploadIsItsResponseToTheEndpointCarryingTheBody() async throws {
        // GIVEN a fake that records what it was asked
        let fake = FakeNetwork(body: Data("stored".utf8))
        let network: any NetworkProviding = fake
        let bytes = Data([0x00, 0x01, 0xFE, 0xFF])
        // WHEN a body is uploaded through it with a progress reporter
        let (progress, reporter) = TransferProgress.makeStream()
        let response = try await network.upload(
            TestEndpoint(path: "/blobs", method: .put, body: .data(bytes, contentType: "application/octet-stream")), progress: reporter)
        // THEN the fake saw the endpoint with its body, its response came back whole, and progress finished
        // without a value (nothing went through a session)
        let asked = try #require(fake.asked.all.first)
        #expect(fake.asked.count == 1)
        #expect(asked.method == .put)
        #expect(asked.path == "/blobs")
        guard case .data(let sent, let contentType) = asked.body else {
            Issue.record("the fake was asked for a body of another kind: \(asked.body)")
            return
        }
        #expect(sent == bytes)
        #expect(contentType == "application/octet-stream")
        #expect(response.data == Data("stored".utf8))
        #expect(await values(of: progress).isEmpty)
    }

    @Test func aFakesDefaultResumingDownloadsFetchTheWholeBody() async throws {
        // GIVEN a fake, an old file, and what an interrupted download kept
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("map.pack")
        let fake = FakeNetwork(body: Data("0123456789".utf8))
        let network: any NetworkProviding = fake
        let saved = try savedDownload(url: "https://cdn.example.com/maps/seoul.pack")
        // WHEN the download is continued without its endpoint
        let resumed = try await network.download(resuming: saved, to: destination)
        // THEN the fake was asked for a GET of the value's URL, and the file is its whole body
        #expect(resumed.statusCode == 200)
        #expect(try Data(contentsOf: destination) == Data("0123456789".utf8))
        let asked = try #require(fake.asked.all.first)
        #expect(asked.method == .get)
        // WHEN the endpoint's own download is continued with the value, after the file was removed
        try FileManager.default.removeItem(at: destination)
        _ = try await network.download(TestEndpoint(path: "/maps/seoul"), to: destination, resuming: saved)
        // THEN the value is not used: the fake was asked for the endpoint, and the file is the whole body
        #expect(fake.asked.all.map(\.path).last == "/maps/seoul")
        #expect(try Data(contentsOf: destination) == Data("0123456789".utf8))
    }

    @Test func aFakesDefaultResumingDownloadRefusesAURLThatIsNotHTTP() async throws {
        // GIVEN a kept value whose URL is a file's (tampered storage), and a fake
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let fake = FakeNetwork(body: Data("x".utf8))
        let network: any NetworkProviding = fake
        let saved = try savedDownload(url: "file:///etc/hosts")
        // WHEN the download is continued
        // THEN it throws the provider's typed error, the fake was never asked, and no file was written
        await #expect(throws: NetworkError.invalidRequest(field: "resumable download's URL", reason: "is not http or https")) {
            _ = try await network.download(resuming: saved, to: folder.appendingPathComponent("f"))
        }
        #expect(fake.asked.count == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }
}
