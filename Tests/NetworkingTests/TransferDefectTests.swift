import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How a test reads a stream: its chunks, its lines or its events.
enum StreamView: String, CaseIterable, Sendable {
    case chunks, lines, events
}

@Suite("Transfer defects: streams", SuiteTimeLimit.oneMinute)
struct StreamDefectTests {
    @Test(arguments: StreamView.allCases)
    func breakingOutOfTheLoopStopsTheTransferWhileTheStreamIsStillHeld(view: StreamView) async throws {
        // GIVEN a slow event stream that never ends (its last event never comes)
        let server = MockServer()
        var ticks = MockResponse.chunked((0..<1_000).map { "data: \($0)\n\n" }, interval: 0.02)
        ticks.chunks[999].delay = .infinity
        server.stub(.get, "/v1/ticks", ticks)
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/ticks"))
        // WHEN the reader breaks out of its loop after the first element, still holding the stream
        switch view {
        case .chunks: for try await _ in stream { break }
        case .lines: for try await _ in stream.lines { break }
        case .events: for try await _ in stream.events { break }
        }
        // THEN the transfer is stopped (the mock sees its load stopped) while the stream is still in scope
        let stopped = await server.waitForInterruptions(1, timeout: 10)
        withExtendedLifetime(stream) {}
        #expect(stopped)
        #expect(server.interruptedCount == 1)
    }
}

/// Records, in order, when calls finish and when their streamed bodies end.
private struct StreamEndRecorder: EventMonitor {
    let log = Recorder<String>()
    let ends = Recorder<(status: Int, error: (any Error)?, bytes: Int64)>()

    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        log.append("finished")
    }

    func streamDidEnd(_ response: Response, error: (any Error)?, bytes: Int64, context: RequestContext) {
        log.append("stream ended")
        ends.append((response.statusCode, error, bytes))
    }
}

@Suite("Transfer defects: the end of a stream is observed")
struct StreamEndEventTests {
    @Test func monitorsAndTheLoggerAreToldWhenAStreamEndsWhole() async throws {
        // GIVEN a provider with a monitor and a logger, and a stream of 3 chunks (12 bytes) whose URL has a secret
        let server = MockServer()
        server.stub(.get, "/v1/feed", .chunked(["data", ": on", "e\n\n\n"], interval: 0.001))
        let recorder = StreamEndRecorder()
        let lines = Recorder<String>()
        let provider = server.makeProvider(monitors: [recorder, NetworkLogger(sink: LogSink { lines.append($0) })])
        // WHEN the stream is read to its end
        let stream = try await provider.stream(TestEndpoint(path: "/feed", queryItems: [URLQueryItem(name: "api_key", value: "s3cr3t")]))
        for try await _ in stream {}
        await provider.waitForMonitors()
        // THEN the monitor heard the end after the call finished, whole, with the body's size
        #expect(recorder.log.all == ["finished", "stream ended"])
        let end = try #require(recorder.ends.all.first)
        #expect(end.status == 200 && end.error == nil && end.bytes == 12)
        // and the logger wrote a line for it, without the secret
        let last = try #require(lines.all.last)
        #expect(last.contains("→ 200 stream ended, 12 bytes"))
        #expect(last.hasPrefix("GET https://api.example.com/v1/feed?api_key="))
        #expect(!lines.all.joined().contains("s3cr3t"))
    }

    @Test func monitorsAndTheLoggerAreToldWhenAStreamFailsMidWay() async throws {
        // GIVEN a stream that drops after one 11-byte event
        let server = MockServer()
        server.stub(.get, "/v1/feed", .chunked(["data: one\n\n"], interval: 0.001, failingWith: URLError(.networkConnectionLost)))
        let recorder = StreamEndRecorder()
        let lines = Recorder<String>()
        let provider = server.makeProvider(monitors: [recorder, NetworkLogger(sink: LogSink { lines.append($0) })])
        // WHEN it is read until it fails
        let stream = try await provider.stream(TestEndpoint(path: "/feed"))
        await #expect(throws: NetworkError.self) {
            for try await _ in stream.events {}
        }
        await provider.waitForMonitors()
        // THEN the monitor heard the failure, with the bytes that came before it
        #expect(recorder.log.all == ["finished", "stream ended"])
        let end = try #require(recorder.ends.all.first)
        #expect(end.bytes == 11)
        guard case NetworkError.transportFailed(let urlError)? = end.error else {
            Issue.record("expected transportFailed, got \(String(describing: end.error))")
            return
        }
        #expect(urlError.code == .networkConnectionLost)
        // and the logger says the stream failed, and after how much
        #expect(lines.all.last?.contains("→ 200 stream failed after 11 bytes: ") == true)
    }
}

@Suite("Transfer defects: dump() of a stream")
struct StreamReflectionTests {
    @Test func dumpingAStreamItsLinesOrItsEventsShowsNoToken() async throws {
        // GIVEN a stream whose request carries a bearer token and whose response sets a cookie
        let server = MockServer()
        server.stub(
            .get, "/v1/feed",
            .chunked(["data: one\n\n"], interval: 0.001, headers: ["Set-Cookie": "session=cookie-s3cr3t", "X-Auth-Token": "header-s3cr3t"]))
        let stream = try await server.makeProvider().stream(TestEndpoint(path: "/feed", headers: ["Authorization": "Bearer token-s3cr3t"]))
        defer { withExtendedLifetime(stream) {} }
        // WHEN the stream, its lines, its events and their iterators are dumped
        var output = ""
        dump(stream, to: &output)
        dump(stream.lines, to: &output)
        dump(stream.events, to: &output)
        dump(stream.makeAsyncIterator(), to: &output)
        dump(stream.lines.makeAsyncIterator(), to: &output)
        dump(stream.events.makeAsyncIterator(), to: &output)
        // THEN no secret appears, but the status and the header names do
        #expect(!output.contains("s3cr3t"))
        #expect(output.contains("200"))
        #expect(output.contains("Authorization"))
    }
}

/// A download endpoint that also accepts `304 Not Modified`.
private struct ConditionalDownload: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/reports/latest.pdf" }
    var headers: [String: String] { ["If-None-Match": #""v1""#] }
    var acceptableStatusCodes: Set<Int> { Set(200..<300).union([304]) }
}

@Suite("Transfer defects: downloads that deliver no body")
struct DownloadWithoutBodyTests {
    @Test func a304LeavesTheDestinationAsItWasAndSaysSo() async throws {
        // GIVEN a file from an earlier download, last modified a week ago, and a server answering 304
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.pdf")
        try Data("the report".utf8).write(to: destination)
        let weekAgo = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 7 * 86_400).rounded())
        try FileManager.default.setAttributes([.modificationDate: weekAgo], ofItemAtPath: destination.path)
        let server = MockServer()
        server.stub(.get, "/v1/reports/latest.pdf", .status(304, headers: ["ETag": #""v1""#]))
        // WHEN it is downloaded again
        let response = try await server.makeProvider().download(ConditionalDownload(), to: destination)
        // THEN the result says 304, and the file keeps its bytes and its modification date; nothing else is left
        #expect(response.statusCode == 304)
        #expect(try Data(contentsOf: destination) == Data("the report".utf8))
        let modified = try FileManager.default.attributesOfItem(atPath: destination.path)[.modificationDate] as? Date
        #expect(modified == weekAgo)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.pdf"])
    }

    @Test func a304LeavesAMissingDestinationMissing() async throws {
        // GIVEN no file at the destination, and a server answering 304
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/reports/latest.pdf", .status(304))
        // WHEN it is downloaded
        let response = try await server.makeProvider().download(ConditionalDownload(), to: folder.appendingPathComponent("latest.pdf"))
        // THEN no file appears (not even an empty one)
        #expect(response.statusCode == 304)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// On Linux a 401 with `WWW-Authenticate: Basic` raises an authentication challenge, even from the mock's
    /// URL protocol; the session delegate cancels it and the 401 is the answer, its body never delivered to a file.
    @Test func anAcceptedChallenged401EndsAsThatResponseAndLeavesTheDestinationAsItWas() async throws {
        struct AcceptsUnauthorized: Endpoint {
            var baseURL: URL { URL(string: "https://api.example.com/v1")! }
            var path: String { "/reports/latest.pdf" }
            var acceptableStatusCodes: Set<Int> { [200, 401] }
        }
        // GIVEN an existing destination, and a server answering 401 with a Basic challenge the endpoint accepts
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("latest.pdf")
        try Data("the report".utf8).write(to: destination)
        let server = MockServer()
        server.stub(
            .get, "/v1/reports/latest.pdf",
            MockResponse(statusCode: 401, headers: ["WWW-Authenticate": #"Basic realm="reports""#], body: Data("denied".utf8)))
        let provider = server.makeProvider()
        // WHEN it is downloaded to the existing file, and to a missing one
        let response = try await provider.download(AcceptsUnauthorized(), to: destination)
        let missing = folder.appendingPathComponent("missing.pdf")
        _ = try await provider.download(AcceptsUnauthorized(), to: missing)
        // THEN the call ends as that 401 (not fileWriteFailed), the file keeps its bytes, the missing one stays
        // missing, and no temporary file is left
        #expect(response.statusCode == 401)
        #expect(try Data(contentsOf: destination) == Data("the report".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.pdf"])
    }
}

/// Creates a file at `url` whose modification date is `age` seconds ago.
private func makeFile(_ url: URL, age: TimeInterval) throws {
    try Data("leftover".utf8).write(to: url)
    try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
}

/// An accepted 200 for the download tests that place a file directly.
private func okResponse() throws -> Response {
    let url = URL(string: "https://api.example.com/v1/reports/latest.pdf")!
    let http = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:]))
    return Response(data: Data(), httpResponse: http, request: URLRequest(url: url))
}

/// What a `sync` saw when it was called.
private final class SyncProbe: @unchecked Sendable {
    // @unchecked: `seen` is guarded by `lock`.
    private let lock = NSLock()
    private var seen: [(file: Data, destination: Data?)] = []

    func record(_ handle: FileHandle, file: URL, destination: URL) throws {
        let entry = (try Data(contentsOf: file), try? Data(contentsOf: destination))
        lock.lock()
        seen.append(entry)
        lock.unlock()
    }

    var calls: [(file: Data, destination: Data?)] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }
}

@Suite("Transfer defects: durable downloads and leftover temporary files")
struct DurableDownloadTests {
    /// A scratch folder holding a downloaded temporary file ("new") and the destination it replaces ("old").
    static func downloadedNewOverOld() throws -> (folder: URL, temporary: URL, destination: URL) {
        let folder = try makeScratchFolder()
        let temporary = folder.appendingPathComponent(".networking-\(UUID().uuidString).download")
        let destination = folder.appendingPathComponent("latest.pdf")
        try Data("new".utf8).write(to: temporary)
        try Data("old".utf8).write(to: destination)
        return (folder, temporary, destination)
    }

    @Test func aDownloadIsFlushedToDiskBeforeItReplacesTheDestination() async throws {
        // GIVEN a downloaded temporary file and an existing destination
        let (folder, temporary, destination) = try Self.downloadedNewOverOld()
        defer { try? FileManager.default.removeItem(at: folder) }
        let probe = SyncProbe()
        // WHEN the download is put in place
        _ = try await NetworkProvider.place(
            .file(temporary), of: try okResponse(), at: destination,
            sync: { try probe.record($0, file: temporary, destination: destination) })
        // THEN the new bytes were flushed once, while the destination still held the old ones, and then moved in
        #expect(probe.calls.count == 1)
        #expect(probe.calls.first?.file == Data("new".utf8))
        #expect(probe.calls.first?.destination == Data("old".utf8))
        #expect(try Data(contentsOf: destination) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.pdf"])
    }

    @Test func aDownloadThatCannotBeFlushedIsFileWriteFailedAndKeepsTheDestination() async throws {
        // GIVEN a downloaded temporary file, an existing destination, and a disk that fails to flush
        let (folder, temporary, destination) = try Self.downloadedNewOverOld()
        defer { try? FileManager.default.removeItem(at: folder) }
        // WHEN the download is put in place
        await #expect {
            _ = try await NetworkProvider.place(.file(temporary), of: try okResponse(), at: destination, sync: { _ in throw POSIXError(.EIO) })
        } throws: { error in
            // THEN it fails with fileWriteFailed, the destination keeps its bytes and the temporary file is gone
            guard case NetworkError.fileWriteFailed(let underlying) = error else { return false }
            return (underlying as? POSIXError)?.code == .EIO
        }
        #expect(try Data(contentsOf: destination) == Data("old".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["latest.pdf"])
    }

    @Test func leftoverDownloadFilesOlderThanADayAreRemovedWhenADownloadStartsInTheirFolder() async throws {
        // GIVEN a folder with a crashed download's two-day-old temporary file, another process's fresh one
        // (an hour old), and an unrelated old file
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeFile(folder.appendingPathComponent(".networking-crashed.download"), age: 2 * 86_400)
        try makeFile(folder.appendingPathComponent(".networking-in-use.download"), age: 3_600)
        try makeFile(folder.appendingPathComponent("notes.download"), age: 2 * 86_400)
        let server = MockServer()
        server.stub(.get, "/v1/files/1", .chunked(["abc"]))
        // WHEN a download into that folder completes
        _ = try await server.makeProvider().download(TestEndpoint(path: "/files/1"), to: folder.appendingPathComponent("file.bin"))
        // THEN only the stale leftover is gone
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [".networking-in-use.download", "file.bin", "notes.download"])
    }

    @Test func leftoverFormFilesOlderThanADayAreRemovedAndYoungerOnesKept() throws {
        // GIVEN a temporary folder with a crashed call's two-day-old spooled form, a fresh one (in use by
        // another process), an unrelated old file, and an old folder with a matching name
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try makeFile(folder.appendingPathComponent("networking-crashed.multipart"), age: 2 * 86_400)
        try makeFile(folder.appendingPathComponent("networking-in-use.multipart"), age: 23 * 3_600)
        try makeFile(folder.appendingPathComponent("upload.multipart"), age: 2 * 86_400)
        let matchingFolder = folder.appendingPathComponent("networking-folder.multipart")
        try FileManager.default.createDirectory(at: matchingFolder, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -2 * 86_400)], ofItemAtPath: matchingFolder.path)
        // WHEN the sweep the provider starts (once per process, over the temporary directory) runs there
        let removed = StaleTemporaryFiles.removeStale(in: folder, where: StaleTemporaryFiles.isMultipart)
        // THEN only the stale form file was removed
        #expect(removed == ["networking-crashed.multipart"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [
                "networking-folder.multipart", "networking-in-use.multipart", "upload.multipart",
            ])
    }
}

/// What a spool's `afterBlock` saw: how many blocks, and whether each ran off the calling thread.
private final class SpoolProbe: @unchecked Sendable {
    // @unchecked: `blocks` and `offPool` are guarded by `lock`.
    private let lock = NSLock()
    private var blocks = 0
    private var offPool: [Bool] = []
    let firstBlock = Signal()
    let proceed = DispatchSemaphore(value: 0)

    /// Records the block; after the first, signals the test and waits until it says go on.
    func block(_ written: Int64) {
        lock.lock()
        blocks += 1
        offPool.append(BlockingFileWork.isCurrent)
        let first = blocks == 1
        lock.unlock()
        if first {
            firstBlock.fire()
            proceed.wait()   // the copy's own dispatch thread, not a cooperative one
        }
    }

    var seen: (blocks: Int, offPool: [Bool]) {
        lock.lock()
        defer { lock.unlock() }
        return (blocks, offPool)
    }
}

@Suite("Transfer defects: spooling a large form")
struct SpoolDefectTests {
    @Test func cancellingMidSpoolStopsPromptlyWithCancelledAndLeavesNoFile() async throws {
        // GIVEN a form with a 64 MiB file (sparse) being spooled
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = folder.appendingPathComponent("big.bin")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()
        let form = MultipartForm([.text("title", "big"), .file("video", at: big)])
        let copy = folder.appendingPathComponent("networking-\(UUID().uuidString).multipart")
        let probe = SpoolProbe()
        let spooling = Task { try await form.spool(to: copy, afterBlock: { probe.block($0) }) }
        // WHEN the calling task is cancelled after the first 64 KB block was copied
        await probe.firstBlock.wait()
        spooling.cancel()
        probe.proceed.signal()
        // THEN the spool throws cancelled before copying another block, and removed its partial copy
        await #expect(throws: NetworkError.cancelled) { _ = try await spooling.value }
        #expect(probe.seen.blocks == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        // and the copy ran on the blocking queue, not on the calling task's (cooperative) thread
        #expect(probe.seen.offPool == [true])
    }
}
