import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The names in `folder`, sorted.
private func contents(of folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
}

/// An endpoint on the auth mock that requires its token, with any body.
private struct ProtectedUpload: Endpoint {
    let baseURL: URL
    var path: String
    var method: HTTPMethod { .post }
    var body: RequestBody
}

/// Answers `path` with `answer` when the request carries the auth mock's current token, else 401.
private func stubProtected(_ api: MockAuthServer, _ method: HTTPMethod, _ path: String, answer: MockResponse) {
    api.mock.stub(method, path) { [weak api] request in
        guard let api, let token = api.currentAccessToken, request.header("Authorization") == "Bearer \(token)" else { return .status(401) }
        return answer
    }
}

@Suite("Multipart forms")
struct MultipartTests {
    @Test func aFormInMemoryIsReadBackPartByPartWithItsNonASCIINamesExact() async throws {
        // GIVEN a form with a Korean text field, an emoji field name and a data part
        let server = MockServer()
        server.stub(.post, "/v1/profile", .status(204))
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let form = MultipartForm([.text("닉네임", "홍길동"), .text("mood 😀", "좋아요"), .data("avatar", png, filename: "내 사진.png")])
        // WHEN it is sent
        _ = try await server.makeProvider().response(TestEndpoint(path: "/profile", method: .post, body: .multipart(form)))
        // THEN the server reads back every part exactly, with the content type inferred from the file name
        let parts = try #require(server.requests.first).multipartParts()
        #expect(parts.map(\.name) == ["닉네임", "mood 😀", "avatar"])
        #expect(parts.map(\.text).prefix(2) == ["홍길동", "좋아요"])
        #expect(parts[2].filename == "내 사진.png")
        #expect(parts[2].contentType == "image/png")
        #expect(parts[2].data == png)
        #expect(parts[0].contentType == nil)
    }

    @Test func aFormWithAFileIsStreamedFromATemporaryCopyThatIsRemovedAfterTheCall() async throws {
        // GIVEN a form with a 1 MB file part
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("report.pdf")
        // `index: Int`: left to the literals, the compiler picks Int128, which needs macOS 15 / iOS 18
        let bytes = Data((0..<1_000_000).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 31) })
        try bytes.write(to: file)
        let server = MockServer()
        server.stub(.post, "/v1/reports", .status(201))
        // WHEN it is sent
        let response = try await server.makeProvider().response(
            TestEndpoint(path: "/reports", method: .post, body: .multipart(MultipartForm([.text("title", "Q3"), .file("report", at: file)]))))
        // THEN the server reads back the file whole, Content-Length matches the body, and no copy is left
        #expect(response.statusCode == 201)
        let request = try #require(server.requests.first)
        let parts = try request.multipartParts()
        #expect(parts.map(\.name) == ["title", "report"])
        #expect(parts[1].filename == "report.pdf")
        #expect(parts[1].contentType == "application/pdf")
        #expect(parts[1].data == bytes)
        #expect(request.header("Content-Length") == String(request.body.count))
        let copy = try #require(request.bodyFile)
        #expect(copy != file)
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }

    @Test func aFormAnsweredWith401IsSentAgainWithTheSameBytesAfterOneRefresh() async throws {
        // GIVEN an expired token and a multipart upload with a file part
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("photo.jpg")
        try Data(repeating: 0xAB, count: 200_000).write(to: file)
        let api = MockAuthServer()
        stubProtected(api, .post, "/v1/photos", answer: .status(201))
        let (provider, _) = api.makeAuthenticatedProvider()
        // WHEN it is uploaded
        let endpoint = ProtectedUpload(baseURL: api.baseURL, path: "/photos", body: .multipart(MultipartForm([.file("photo", at: file)])))
        let response = try await provider.response(endpoint)
        // THEN one refresh happened and both attempts carried the same body
        #expect(response.statusCode == 201)
        #expect(api.refreshCount == 1)
        let sent = api.mock.requests(.post, "/v1/photos")
        #expect(sent.count == 2)
        #expect(sent[0].body == sent[1].body)
        #expect(sent[0].header("Content-Type") == sent[1].header("Content-Type"))
        #expect(try sent[1].multipartParts().first?.data == Data(repeating: 0xAB, count: 200_000))
    }

    @Test(arguments: [
        MultipartForm([.text("name\r\nX-Injected: 1", "v")]),
        MultipartForm([.data("file", Data(), filename: "a\nb.txt")]),
        MultipartForm([.file("file", at: URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin"))]),
        MultipartForm([MultipartForm.Part(name: "x", headers: ["X-Note": "a\r\nb"], content: .data(Data()))]),
    ])
    func aFormThatWouldCorruptTheFramingOrNamesAMissingFileIsRefusedBeforeSending(form: MultipartForm) async throws {
        // GIVEN a server
        let server = MockServer()
        server.stub(.post, "/v1/upload", .status(204))
        // WHEN the bad form is sent
        await #expect {
            _ = try await server.makeProvider().response(TestEndpoint(path: "/upload", method: .post, body: .multipart(form)))
        } throws: { error in
            // THEN it is a typed error naming the field, and nothing was sent
            guard case NetworkError.invalidRequest(let field, _) = error else { return false }
            return field.hasPrefix("multipart part 1")
        }
        #expect(server.requests.isEmpty)
    }

    @Test func aFileNameWithASemicolonOrAQuoteIsReadBackWhole() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/upload", .status(204))
        let form = MultipartForm([.data("file", Data("x".utf8), filename: "a;b \"c\".txt")])
        _ = try await server.makeProvider().response(TestEndpoint(path: "/upload", method: .post, body: .multipart(form)))
        #expect(try server.requests[0].multipartParts().first?.filename == "a;b \"c\".txt")
    }

    @Test func aMissingBodyFileIsRefusedBeforeSending() async throws {
        let server = MockServer()
        server.stub(.put, "/v1/blob", .status(204))
        let endpoint = TestEndpoint(
            path: "/blob", method: .put, body: .file(URL(fileURLWithPath: "/nonexistent/blob.bin"), contentType: "application/octet-stream"))
        await #expect(throws: NetworkError.self) { _ = try await server.makeProvider().response(endpoint) }
        #expect(server.requests.isEmpty)
    }

    @Test func theBoundaryIsNeverOneThatOccursInsideAPart() throws {
        // GIVEN a data part that contains the boundary about to be tried
        let boundary = "networking.0123456789abcdef"
        let form = MultipartForm([.data("a", Data("xx--\(boundary)yy".utf8), filename: "a.bin")])
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // WHEN it is written with that boundary, THEN the writer refuses it (and spool() picks another)
        #expect(try form.write(to: folder.appendingPathComponent("body"), boundary: boundary) == nil)
        #expect(try form.write(to: folder.appendingPathComponent("body"), boundary: boundary + "0") != nil)
        // and in memory the chosen boundary is not inside the part
        let (data, contentType) = try form.encodedInMemory()
        let chosen = try #require(contentType.components(separatedBy: "boundary=").last)
        #expect(data.range(of: Data("--\(chosen)".utf8)) != nil)
        #expect(Data("xx--\(boundary)yy".utf8).range(of: Data(chosen.utf8)) == nil)
    }

    @Test func aFileBodyIsSentWithItsLengthAndContentType() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("clip.mp4")
        try Data(repeating: 7, count: 50_000).write(to: file)
        let server = MockServer()
        server.stub(.put, "/v1/clips/1", .status(204))
        let (progress, reporter) = TransferProgress.makeStream()
        _ = try await server.makeProvider().upload(
            TestEndpoint(path: "/clips/1", method: .put, body: .file(file, contentType: "video/mp4")), progress: reporter)
        let request = try #require(server.requests.first)
        #expect(request.body == Data(repeating: 7, count: 50_000))
        #expect(request.header("Content-Length") == "50000")
        #expect(request.header("Content-Type") == "video/mp4")
        for await _ in progress {}   // finished when the call ended
    }
}

@Suite("Downloads", SuiteTimeLimit.oneMinute)
struct DownloadTests {
    @Test func aDownloadLandsAtTheDestinationWithProgressThatNeverGoesBackwards() async throws {
        // GIVEN a 40 KB body sent in 10 chunks with a declared length
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let chunks = (0..<10).map { Data(repeating: UInt8($0), count: 4_096) }
        let server = MockServer()
        server.stub(.get, "/v1/files/1", .chunked(chunks, interval: 0.001, headers: ["Content-Length": "40960"]))
        let destination = folder.appendingPathComponent("file.bin")
        try Data("old".utf8).write(to: destination)
        // WHEN it is downloaded while progress is read
        let (progress, reporter) = TransferProgress.makeStream()
        let provider = server.makeProvider()
        async let response = provider.download(TestEndpoint(path: "/files/1"), to: destination, progress: reporter)
        var seen: [TransferProgress] = []
        for await step in progress { seen.append(step) }
        // THEN the file is the whole body, replacing the old one, and nothing else is left in the folder
        #expect(try await response.statusCode == 200)
        #expect(try Data(contentsOf: destination) == chunks.reduce(Data(), +))
        #expect(try contents(of: folder) == ["file.bin"])
        // and progress only went forward, towards the declared total
        #expect(!seen.isEmpty)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(seen.allSatisfy { $0.totalBytes == 40_960 && $0.attempt == 1 })
    }

    @Test func aFailedDownloadLeavesNoFileAndKeepsWhatWasThere() async throws {
        // GIVEN a body that breaks off after two chunks, and an existing file at the destination
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/2", .chunked([Data(count: 1_000), Data(count: 1_000)], failingWith: URLError(.networkConnectionLost)))
        server.stub(.get, "/v1/files/3", .json(raw: #"{"error":"gone"}"#, statusCode: 404))
        let destination = folder.appendingPathComponent("keep.bin")
        try Data("previous".utf8).write(to: destination)
        let provider = server.makeProvider()
        // WHEN the download fails mid-body, or with a 404
        await #expect(throws: NetworkError.self) { _ = try await provider.download(TestEndpoint(path: "/files/2"), to: destination) }
        await #expect(throws: NetworkError.invalidStatusCode(404)) { _ = try await provider.download(TestEndpoint(path: "/files/3"), to: destination) }
        // THEN the old file is untouched and no temporary file is left
        #expect(try String(contentsOf: destination, encoding: .utf8) == "previous")
        #expect(try contents(of: folder) == ["keep.bin"])
    }

    @Test func cancellingADownloadRemovesItsPartialFile() async throws {
        // GIVEN a download whose body trickles in, and whose last chunk never comes (however slowly the test
        // runs, the cancel meets the body midway)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        var trickle = MockResponse.chunked((0..<100).map { _ in Data(count: 1_000) }, interval: 0.05)
        trickle.chunks[99].delay = .infinity
        server.stub(.get, "/v1/files/4", trickle)
        let provider = server.makeProvider()
        let destination = folder.appendingPathComponent("big.bin")
        let (progress, reporter) = TransferProgress.makeStream()
        let download = Task { try await provider.download(TestEndpoint(path: "/files/4"), to: destination, progress: reporter) }
        // WHEN it is cancelled once the first bytes were written
        for await step in progress where step.completedBytes > 0 { break }
        download.cancel()
        // THEN the call throws cancelled and the folder is empty
        await #expect(throws: NetworkError.cancelled) { _ = try await download.value }
        #expect(try contents(of: folder).isEmpty)
    }

    @Test func anErrorBodyOfADownloadKeepsTheProvidersLimit() async throws {
        // GIVEN a download with no limit of its own, answered with a 500 and a large chunked error body
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/6", .chunked((0..<10).map { _ in Data(count: 1_000) }, statusCode: 500))
        let provider = server.makeProvider(maximumResponseSize: 2_000)
        // WHEN it is downloaded, THEN the error body is held only up to the provider's limit
        await #expect(throws: NetworkError.responseTooLarge(limit: 2_000)) {
            _ = try await provider.download(TestEndpoint(path: "/files/6"), to: folder.appendingPathComponent("f"))
        }
        #expect(try contents(of: folder).isEmpty)
    }

    @Test func aDownloadIntoAFolderThatDoesNotExistFailsBeforeSending() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/files/1", .json(["ok": true]))
        let destination = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/file.bin")
        await #expect(throws: NetworkError.invalidRequest(field: "download destination", reason: "is in a folder that does not exist or cannot be written")) {
            _ = try await server.makeProvider().download(TestEndpoint(path: "/files/1"), to: destination)
        }
        #expect(server.requests.isEmpty)
    }

    @Test func aDownloadOverTheEndpointsLimitIsStoppedAndRemoved() async throws {
        struct SmallFile: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/files/5" }
            var maximumResponseSize: Int? { 2_500 }
        }
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/5", .chunked((0..<5).map { _ in Data(count: 1_000) }))
        await #expect(throws: NetworkError.responseTooLarge(limit: 2_500)) {
            _ = try await server.makeProvider().download(SmallFile(), to: folder.appendingPathComponent("f"))
        }
        #expect(try contents(of: folder).isEmpty)
    }
}

@Suite("Streamed responses", SuiteTimeLimit.oneMinute)
struct StreamTests {
    @Test func serverSentEventsAreReadAcrossChunkBoundariesAsTheStandardSays() async throws {
        // GIVEN an event stream cut at awkward places: inside a UTF-8 character, between CR and LF
        let body = Data(
            ": keep-alive\r\nevent: greeting\r\ndata: 안녕\r\ndata: 😀\r\nid: 7\r\nretry: 1500\r\n\r\ndata: second\n\ndata\n\n: trailing\nevent: cut".utf8)
        let cuts = [5, 31, 40, 44, 52, body.count - 3]
        var chunks: [Data] = []
        var start = 0
        for cut in cuts + [body.count] {
            chunks.append(body.subdata(in: start..<cut))
            start = cut
        }
        let server = MockServer()
        server.stub(.get, "/v1/events", .chunked(chunks, interval: 0.001, headers: ["Content-Type": "text/event-stream"]))
        // WHEN its events are read
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/events"))
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        // THEN each block with data is one event; comments and the unfinished last block are dropped
        #expect(stream.response.statusCode == 200)
        #expect(
            events == [
                ServerSentEvent(event: "greeting", data: "안녕\n😀", id: "7", retry: 1_500),
                ServerSentEvent(data: "second", id: "7", retry: 1_500),
                ServerSentEvent(data: "", id: "7", retry: 1_500),
            ])
    }

    @Test func retryCarriesOverLikeTheLastEventIDAndFieldsSplitOnCodePoints() {
        // GIVEN the lines of a stream: a retry-only block, then events whose values start with a combining mark
        var parser = EventStreamParser()
        let lines = ["retry: 3000", "", "data: a", "", "data:\u{301}x", "", "data: \u{301}y", "", "id: 9", "retry: x", "data: b", ""]
        // WHEN they are read
        let events = lines.compactMap { parser.read($0) }
        // THEN the reconnection time applies to later events, and a value is split after the colon's code point
        #expect(
            events == [
                ServerSentEvent(data: "a", retry: 3_000),
                ServerSentEvent(data: "\u{301}x", retry: 3_000),
                ServerSentEvent(data: "\u{301}y", retry: 3_000),
                ServerSentEvent(data: "b", id: "9", retry: 3_000),
            ])
    }

    @Test func linesEndAtLFCRLFOrCRAndALastLineWithoutABreakIsKept() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/lines", .chunked(["one\r", "\ntwo\rthree\n", "fo", "ur"]))
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/lines"))
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        #expect(lines == ["one", "two", "three", "four"])
    }

    @Test func a401BeforeTheStreamRefreshesOnceAndTheStreamComesFromTheResend() async throws {
        // GIVEN an expired token and an event stream that needs a valid one
        let api = MockAuthServer()
        stubProtected(api, .get, "/v1/chat", answer: .chunked(["data: hello\n\n"], headers: ["Content-Type": "text/event-stream"]))
        let (provider, _) = api.makeAuthenticatedProvider()
        // WHEN the stream is opened
        let stream = try await provider.stream(api.resource("/chat"))
        var events: [String] = []
        for try await event in stream.events { events.append(event.data) }
        // THEN one refresh happened, and the events came from the second attempt
        #expect(events == ["hello"])
        #expect(api.refreshCount == 1)
        #expect(api.mock.requests(.get, "/v1/chat").count == 2)
    }

    @Test func anErrorMidStreamReachesTheReaderAndIsNotRetried() async throws {
        // GIVEN a stream that drops after one event, and a retry policy that would retry drops
        let server = MockServer()
        server.stub(.get, "/v1/feed", .chunked(["data: one\n\n", "data: tw"], interval: 0.001, failingWith: URLError(.networkConnectionLost)))
        let provider = server.makeProvider(interceptor: RetryPolicy())
        // WHEN it is read
        let stream = try await provider.stream(TestEndpoint(path: "/feed"))
        var events: [String] = []
        await #expect {
            for try await event in stream.events { events.append(event.data) }
        } throws: { error in
            // THEN the reader gets the event before the drop, then the typed error
            guard case NetworkError.transportFailed(let urlError) = error else { return false }
            return urlError.code == .networkConnectionLost
        }
        #expect(events == ["one"])
        #expect(server.requests.count == 1)
    }

    @Test func anUnacceptableStatusThrowsBeforeStreamingWithItsBodyForTheErrorMapper() async throws {
        struct APIError: Error, Decodable { let code: String }
        let server = MockServer()
        server.stub(.get, "/v1/events", .json(raw: #"{"code":"E42"}"#, statusCode: 403))
        let provider = server.makeProvider(errorMapper: { try? JSONDecoder().decode(APIError.self, from: $0.data) })
        await #expect { _ = try await provider.stream(TestEndpoint(path: "/events")) } throws: { ($0 as? APIError)?.code == "E42" }
    }

    @Test func cancellingTheReaderStopsTheTransfer() async throws {
        // GIVEN an endless slow stream (its last event never comes)
        let server = MockServer()
        var ticks = MockResponse.chunked((0..<1_000).map { "data: \($0)\n\n" }, interval: 0.02)
        ticks.chunks[999].delay = .infinity
        server.stub(.get, "/v1/ticks", ticks)
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/ticks"))
        let firstEvent = Signal()
        let reader = Task {
            var count = 0
            for try await _ in stream.events {
                count += 1
                firstEvent.fire()
            }
            return count
        }
        // WHEN the reading task is cancelled after the first event
        await firstEvent.wait()
        reader.cancel()
        // THEN the reader ends with `cancelled` and the mock saw the load stopped
        await #expect(throws: NetworkError.cancelled) { _ = try await reader.value }
        #expect(await server.waitForInterruptions(1))
        #expect(server.interruptedCount == 1)
    }

    @Test func aLineOverTheLimitThrowsInsteadOfGrowingWithoutBound() async throws {
        struct Limited: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/lines" }
            var maximumResponseSize: Int? { 100 }
        }
        let server = MockServer()
        server.stub(.get, "/v1/lines", .chunked((0..<10).map { _ in String(repeating: "x", count: 50) }))
        let stream = try await server.makeProvider().stream(Limited())
        await #expect(throws: NetworkError.responseTooLarge(limit: 100)) {
            for try await _ in stream.lines {}
        }
    }

    @Test func aReaderThatFallsTooFarBehindGetsResponseTooLarge() async throws {
        // GIVEN a channel with a 10-byte buffer and a reader that has not read yet
        let channel = BodyChannel(limit: 10)
        // WHEN 12 bytes arrive
        #expect(channel.send(Data(count: 6)))
        #expect(!channel.send(Data(count: 6)))
        // THEN the reader gets what fitted, then the error
        var iterator = channel.chunks.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 6)
        await #expect(throws: NetworkError.responseTooLarge(limit: 10)) { _ = try await iterator.next() }
    }
}

@Suite("Transfers under load")
struct TransferLoadTests {
    @Test func fiveHundredConcurrentDownloadsAndStreamsAllFinishWhole() async throws {
        // GIVEN a server with a chunked download and an event stream
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/files/1", .chunked((0..<4).map { Data(repeating: UInt8($0), count: 2_048) }, headers: ["Content-Length": "8192"]))
        server.stub(.get, "/v1/events", .chunked(["data: a\n\n", "data: b\n", "\ndata: c\n\n"]))
        let provider = server.makeProvider()
        // WHEN 250 downloads and 250 streams run at once
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<250 {
                group.addTask {
                    let destination = folder.appendingPathComponent("\(index).bin")
                    _ = try await provider.download(TestEndpoint(path: "/files/1"), to: destination)
                    return try Data(contentsOf: destination).count == 8_192
                }
                group.addTask {
                    var data: [String] = []
                    for try await event in try await provider.stream(TestEndpoint(path: "/events")).events { data.append(event.data) }
                    return data == ["a", "b", "c"]
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        // THEN every one finished whole, and the folder holds exactly the 250 files
        #expect(results.count == 500)
        #expect(results.allSatisfy { $0 })
        #expect(try contents(of: folder).count == 250)
    }
}

/// Waits (polling every 10 ms, at most 5 s) until `condition` holds: for effects that happen on another
/// queue after a call returned.
func waitUntil(_ condition: @escaping @Sendable () -> Bool) async throws {
    for _ in 0..<500 where !condition() {
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    #expect(condition())
}
