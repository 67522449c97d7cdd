import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A provider on `server` that retries dropped downloads at once (delays recorded, never waited for).
private func retryingProvider(_ server: MockServer, retries: Int = 2, maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize)
    -> NetworkProvider
{
    server.makeProvider(
        interceptor: RetryPolicy(retryLimit: retries), maximumResponseSize: maximumResponseSize, sleep: RecordedDelays().sleep)
}

@Suite("Resuming a download within a call", SuiteTimeLimit.oneMinute)
struct ResumeWithinCallTests {
    @Test func aDropAfterBytesIsResumedWithRangeAndIfRangeAndTheFileEndsWhole() async throws {
        // GIVEN a 10,000-byte file with a strong ETag whose first answer drops after 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let destination = folder.appendingPathComponent("big.bin")
        // WHEN it is downloaded with a retry policy, while progress is read
        let (progress, reporter) = TransferProgress.makeStream()
        let provider = retryingProvider(server)
        async let response = provider.download(FileDownload(), to: destination, progress: reporter)
        var seen: [TransferProgress] = []
        for await step in progress { seen.append(step) }
        // THEN the retry asked only for the rest, with exactly the first answer's validator
        #expect(try await response.statusCode == 206)
        let sent = server.requests
        #expect(sent.count == 2)
        #expect(sent[0].header("Range") == nil && sent[0].header("If-Range") == nil)
        #expect(sent[1].header("Range") == "bytes=6000-")
        #expect(sent[1].header("If-Range") == "\"v1\"")
        // and the file is the body, byte for byte, with no partial file left; the server sent each byte once
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["big.bin"])
        #expect(file.bytesSent == 10_000)
        // and progress never went backwards: the second attempt went on from 6,000 towards the whole length
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        let resumed = seen.filter { $0.attempt == 2 }
        #expect(!resumed.isEmpty)
        #expect(resumed.allSatisfy { $0.completedBytes >= 6_000 && $0.totalBytes == 10_000 })
        #expect(seen.last?.completedBytes == 10_000)
    }

    #if canImport(FoundationNetworking)
        @Test func aBodyCutShortThatLinuxReportsAsUnknownIsRetriedAndResumedAsALostConnection() async throws {
            // GIVEN a download whose connection closes mid-body, which URLSession on Linux reports as URLError(.unknown)
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let body = fileBody(10_000)
            let file = ServedFile(body, drops: [6_000], failure: URLError(.unknown))
            let server = MockServer()
            server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
            // WHEN it is downloaded with the default retry policy
            let destination = folder.appendingPathComponent("f")
            _ = try await retryingProvider(server).download(FileDownload(), to: destination)
            // THEN the policy retried it as a lost connection, and the retry resumed it
            #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=6000-"])
            #expect(try Data(contentsOf: destination) == body)
        }
    #endif

    @Test func aLastModifiedASecondOrMoreBeforeTheDateIsSentBackAsIfRange() async throws {
        // GIVEN a file without an ETag, last modified 10 s before the answer's Date, that drops once
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let modified = "Tue, 15 Nov 1994 08:12:21 GMT"
        let file = ServedFile(
            fileBody(10_000), headers: ["Last-Modified": modified, "Date": "Tue, 15 Nov 1994 08:12:31 GMT"], drops: [3_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        _ = try await retryingProvider(server).download(FileDownload(), to: folder.appendingPathComponent("f"))
        // THEN the retry's If-Range is exactly that date
        #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=3000-"])
        #expect(server.requests.last?.header("If-Range") == modified)
        #expect(try Data(contentsOf: folder.appendingPathComponent("f")) == fileBody(10_000))
    }

    /// Validators that are not strong, or a body a range cannot continue.
    static let notResumable: [[String: String]] = [
        ["ETag": "W/\"v1\"", "Last-Modified": "Tue, 15 Nov 1994 08:12:21 GMT", "Date": "Tue, 15 Nov 1994 08:12:31 GMT"],
        ["Last-Modified": "Tue, 15 Nov 1994 08:12:31 GMT", "Date": "Tue, 15 Nov 1994 08:12:31 GMT"],
        ["Last-Modified": "Tue, 15 Nov 1994 08:12:21 GMT"],
        ["ETag": "v1"],
        [:],
        ["ETag": "\"v1\"", "Content-Encoding": "gzip"],
    ]

    @Test(arguments: notResumable)
    func aWeakOrMissingValidatorOrAnEncodedBodyNeverResumes(headers: [String: String]) async throws {
        // GIVEN a file served with these headers that drops once
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), headers: headers, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the retry asked for the whole file again, and the file is whole
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.header("Range") == nil && $0.header("If-Range") == nil })
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
        #expect(try folderContents(folder) == ["f"])
    }

    @Test func aServerThatIgnoresTheRangeRestartsTheFileFromItsFirstByte() async throws {
        // GIVEN a server that answers a range request with the whole file (200)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .ignores)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN the download drops and is retried
        let destination = folder.appendingPathComponent("f")
        let response = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the retry asked for the rest, but the file is the whole body once, not the kept part plus the body
        #expect(response.statusCode == 200)
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func aFileThatChangedBetweenAttemptsIsDownloadedAnewAsItIsNow() async throws {
        // GIVEN a file that is replaced (new ETag) after its first answer dropped
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000])
        let server = MockServer()
        let newer = fileBody(9_000, seed: 0x5A)
        server.stub(.get, "/v1/files/big.bin") { request in
            let answer = file.response(to: request)
            file.change(to: newer, headers: ["ETag": "\"v2\""])
            return answer
        }
        // WHEN the download is retried with the old validator
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the server's 200 replaced the kept bytes: the file is the new version, whole
        #expect(server.requests.last?.header("If-Range") == "\"v1\"")
        #expect(try Data(contentsOf: destination) == newer)
    }

    @Test func a416RestartsFromTheFirstByteWithoutAskingTheRetriersAgain() async throws {
        // GIVEN a server that refuses any range with 416, and a retrier that grants one retry
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .refuses)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let asked = Recorder<Int>()
        let oneRetry = ClosureRetrier { _, _, _, context in
            asked.append(context.retryCount)
            return context.retryCount == 0 ? .retry : .doNotRetry
        }
        let provider = server.makeProvider(interceptor: Interceptor(retriers: [oneRetry]))
        // WHEN the download drops and its resumption is refused
        let destination = folder.appendingPathComponent("f")
        let response = try await provider.download(FileDownload(), to: destination)
        // THEN a third request asked for the whole file, unasked by the retrier, and the file is whole
        #expect(response.statusCode == 200)
        #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=6000-", nil])
        #expect(asked.all == [0])
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["f"])
        #expect(response.report.statusCodes == [nil, nil, 200])
    }

    @Test func aContentRangeThatDoesNotStartWhereTheFileStoppedRestarts() async throws {
        // GIVEN a server that answers the range with a 206 starting elsewhere
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .startsAt(5_000))
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN the download drops and is retried
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the misfit was not appended: the next request asked for the whole file
        #expect(server.requests.map { $0.header("Range") } == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func theSizeLimitCountsTheKeptBytesAndTheRest() async throws {
        // GIVEN an endpoint limited to 8,000 bytes and a 10,000-byte body of undeclared length that drops at 6,000
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000], declaresLength: false)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        // THEN the rest (4,000 bytes, under the limit) is refused with the kept bytes, and no file is left
        await #expect(throws: NetworkError.responseTooLarge(limit: 8_000)) {
            _ = try await retryingProvider(server).download(FileDownload(maximumResponseSize: 8_000), to: folder.appendingPathComponent("f"))
        }
        #expect(server.requests.count == 2)
        #expect(try folderContents(folder).isEmpty)
    }

    @Test func aResumedAttemptCarriesTheRangeThroughARedirectToAnotherOrigin() async throws {
        // GIVEN an API that redirects the download to a CDN, whose first answer drops
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [4_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin", .status(302, headers: ["Location": "https://cdn.example.net/blobs/big.bin"]))
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the retry's hops both asked for the rest with the CDN's validator
        let hosts = server.requests.map { "\($0.url.host ?? "") \($0.header("Range") ?? "-") \($0.header("If-Range") ?? "-")" }
        #expect(
            hosts == [
                "api.example.com - -", "cdn.example.net - -", "api.example.com bytes=4000- \"v1\"", "cdn.example.net bytes=4000- \"v1\"",
            ])
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test(arguments: [
        FileDownload(acceptableStatusCodes: [200]), FileDownload(method: .post), FileDownload(headers: ["Range": "bytes=0-"]),
    ])
    func aCallThatDoesNotAcceptPartialContentIsNotAGETOrSetsItsOwnRangeNeverResumes(endpoint: FileDownload) async throws {
        // GIVEN such a call, whose first answer drops, and a retrier that always retries once
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000], handling: .ignores)
        let server = MockServer()
        server.stub(handler: { file.response(to: $0) })
        let once = ClosureRetrier { _, _, _, context in context.retryCount == 0 ? .retry : .doNotRetry }
        // WHEN it is downloaded
        _ = try await server.makeProvider(interceptor: Interceptor(retriers: [once])).download(endpoint, to: folder.appendingPathComponent("f"))
        // THEN the retry asked for the whole body as the call built it
        #expect(server.requests.count == 2)
        #expect(server.requests.allSatisfy { $0.header("If-Range") == nil && $0.header("Range") == endpoint.headers["Range"] })
        #expect(try folderContents(folder) == ["f"])
    }
}

extension FileDownload: CustomTestStringConvertible {
    var testDescription: String { "\(method) accepting \(acceptableStatusCodes.sorted()) \(headers)" }
}

@Suite("Resuming a download in a later call", SuiteTimeLimit.oneMinute)
struct ResumeAcrossCallsTests {
    /// Downloads `file` with `provider` opting in to resuming, and returns the value it threw.
    private func interruptedDownload(
        into folder: URL, with provider: NetworkProvider, endpoint: FileDownload = FileDownload()
    ) async throws -> DownloadInterrupted {
        do {
            _ = try await provider.download(endpoint, to: folder.appendingPathComponent("big.bin"), resuming: nil)
        } catch let interrupted as DownloadInterrupted {
            return interrupted
        }
        Issue.record("the download did not throw DownloadInterrupted")
        throw CancellationError()
    }

    @Test func aFailedDownloadHandsOutAValueThatSurvivesCodableAndContinuesInAnotherProvider() async throws {
        // GIVEN a download with no retries that drops after 6,000 of 10,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it fails
        let interrupted = try await interruptedDownload(into: folder, with: server.makeProvider())
        // THEN the error says why and carries the URL, the validator, the partial file and its length
        guard case NetworkError.transportFailed(let urlError) = interrupted.underlying else {
            Issue.record("underlying: \(interrupted.underlying)")
            return
        }
        #expect(urlError.code == .networkConnectionLost)
        let value = interrupted.resumable
        #expect(value.url.absoluteString == "https://api.example.com/v1/files/big.bin")
        #expect(value.validator == "\"v1\"")
        #expect(value.bytesReceived == 6_000 && value.totalBytes == 10_000)
        #expect(value.partialFile.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
        #expect(try Data(contentsOf: value.partialFile) == body.prefix(6_000))
        #expect(try folderContents(folder) == [value.partialFile.lastPathComponent])
        // WHEN the value is stored, read back "after a relaunch", and continued by a new provider
        let stored = try JSONEncoder().encode(value)
        let restored = try JSONDecoder().decode(ResumableDownload.self, from: stored)
        #expect(restored == value)
        let (progress, reporter) = TransferProgress.makeStream()
        let destination = folder.appendingPathComponent("big.bin")
        async let response = server.makeProvider().download(resuming: restored, to: destination, progress: reporter)
        var seen: [TransferProgress] = []
        for await step in progress { seen.append(step) }
        // THEN its first request asked for the rest, the file is whole, and the partial file is gone
        #expect(try await response.statusCode == 206)
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(server.requests.last?.header("If-Range") == "\"v1\"")
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["big.bin"])
        #expect(file.bytesSent == 10_000)
        #expect(!seen.isEmpty && seen.allSatisfy { $0.completedBytes >= 6_000 })
    }

    @Test func cancellingHandsOutTheValueAndDiscardRemovesThePartialFile() async throws {
        // GIVEN a download whose body trickles in, and whose last chunk never comes (however slowly the test
        // runs, the cancel meets the body midway)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(100_000), interval: 0.02)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { request in
            var response = file.response(to: request)
            if !response.chunks.isEmpty { response.chunks[response.chunks.count - 1].delay = .infinity }
            return response
        }
        let provider = server.makeProvider()
        let (progress, reporter) = TransferProgress.makeStream()
        let download = Task {
            try await provider.download(FileDownload(), to: folder.appendingPathComponent("big.bin"), resuming: nil, progress: reporter)
        }
        // WHEN it is cancelled once bytes were written
        for await step in progress where step.completedBytes > 0 { break }
        download.cancel()
        // THEN it throws the value, its underlying error is `cancelled`, and the partial file holds its bytes
        let result = await download.result
        guard case .failure(let error as DownloadInterrupted) = result else {
            Issue.record("expected DownloadInterrupted, got \(result)")
            return
        }
        #expect(error.underlying as? NetworkError == .cancelled)
        #expect(error.resumable.bytesReceived > 0)
        let size = try FileManager.default.attributesOfItem(atPath: error.resumable.partialFile.path)[.size] as? Int
        #expect(size.map(Int64.init) == error.resumable.bytesReceived)
        // WHEN the app gives it up, THEN the partial file is removed
        error.resumable.discard()
        #expect(try folderContents(folder).isEmpty)
    }

    @Test(arguments: zip([["ETag": "\"v1\""], ["ETag": "W/\"v1\""]], [false, true]))
    func aFailureWithoutOptingInOrThatCannotBeResumedThrowsTheErrorItselfAndLeavesNoPartialFile(
        headers: [String: String], optsIn: Bool
    ) async throws {
        // GIVEN a file that drops: resumable but downloaded without `resuming:`, or with a weak validator and `resuming:`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), headers: headers, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let provider = server.makeProvider()
        let destination = folder.appendingPathComponent("f")
        // WHEN it fails, THEN it throws what it always threw (no DownloadInterrupted), and nothing is left in the folder
        await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
            _ = try await optsIn ? provider.download(FileDownload(), to: destination, resuming: nil) : provider.download(FileDownload(), to: destination)
        }
        #expect(try folderContents(folder).isEmpty)
    }

    @Test func aValueOfAnotherURLOrWhosePartialFileIsGoneStartsFromTheFirstByte() async throws {
        // GIVEN a value kept for one file
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000])
        let server = MockServer()
        server.stub(handler: { file.response(to: $0) })
        let value = try await interruptedDownload(into: folder, with: server.makeProvider()).resumable
        // WHEN it is passed with another endpoint
        let other = FileDownload(path: "/files/other.bin")
        _ = try await server.makeProvider().download(other, to: folder.appendingPathComponent("other.bin"), resuming: value)
        // THEN that download asked for the whole body, and removed the value's partial file, which nothing
        // can continue (it would double the disk used for a day)
        #expect(server.requests.last?.header("Range") == nil)
        #expect(!FileManager.default.fileExists(atPath: value.partialFile.path))
        // WHEN its partial file is gone and it is resumed
        value.discard()
        _ = try await server.makeProvider().download(resuming: value, to: folder.appendingPathComponent("big.bin"))
        // THEN the download started from the first byte, and ended whole
        #expect(server.requests.last?.header("Range") == nil)
        #expect(try Data(contentsOf: folder.appendingPathComponent("big.bin")) == fileBody(10_000))
        #expect(try folderContents(folder) == ["big.bin", "other.bin"])
    }

    @Test func aPartialFileOlderThanADayIsNotSweptWhenItsDownloadResumes() async throws {
        // GIVEN a kept partial file last written two days ago, in a folder no download has swept yet
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let value = try await interruptedDownload(into: folder, with: server.makeProvider()).resumable
        let destinationFolder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: destinationFolder) }
        let moved = destinationFolder.appendingPathComponent(value.partialFile.lastPathComponent)
        try FileManager.default.moveItem(at: value.partialFile, to: moved)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -2 * 86_400)], ofItemAtPath: moved.path)
        // WHEN it is resumed into that folder (the app's container moved: the value's path is stale)
        let destination = destinationFolder.appendingPathComponent("big.bin")
        _ = try await server.makeProvider().download(resuming: value, to: destination)
        // THEN it was found by name beside the destination, spared by the sweep, and continued
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
        #expect(try folderContents(destinationFolder) == ["big.bin"])
    }

    @Test func aPartialFileElsewhereIsMovedBesideTheDestination() async throws {
        // GIVEN a value whose partial file is in another folder than the next destination
        let folder = try makeScratchFolder()
        let elsewhere = try makeScratchFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: elsewhere)
        }
        let file = ServedFile(fileBody(10_000), drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let value = try await interruptedDownload(into: elsewhere, with: server.makeProvider()).resumable
        // WHEN it is resumed into `folder`
        _ = try await server.makeProvider().download(FileDownload(), to: folder.appendingPathComponent("big.bin"), resuming: value)
        // THEN it continued, and both folders hold only what they should
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(try folderContents(folder) == ["big.bin"])
        #expect(try folderContents(elsewhere).isEmpty)
    }

    @Test func aValueThatNamesAnotherFileIsNeverWrittenToNorRemoved() async throws {
        // GIVEN a stored value edited to point at a document of the app's
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = folder.appendingPathComponent("notes.txt")
        try Data("keep me".utf8).write(to: document)
        let forged = #"{"url":"https://api.example.com/v1/files/big.bin","validator":"\"v1\"","partialFile":"\#(document.absoluteString)","bytesReceived":3}"#
        let value = try JSONDecoder().decode(ResumableDownload.self, from: Data(forged.utf8))
        let server = MockServer()
        let file = ServedFile(fileBody(1_000))
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is resumed and discarded
        _ = try await server.makeProvider().download(resuming: value, to: folder.appendingPathComponent("big.bin"))
        value.discard()
        // THEN the document is untouched and the download started from the first byte
        #expect(try String(contentsOf: document, encoding: .utf8) == "keep me")
        #expect(server.requests.last?.header("Range") == nil)
    }

    @Test func aValueWhoseURLIsNotHTTPIsRefusedBeforeSending() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let forged = #"{"url":"file:///etc/passwd","validator":"\"v1\"","partialFile":"/tmp/.networking-x.download","bytesReceived":3}"#
        let value = try JSONDecoder().decode(ResumableDownload.self, from: Data(forged.utf8))
        let server = MockServer()
        await #expect(throws: NetworkError.invalidRequest(field: "resumable download's URL", reason: "is not http or https")) {
            _ = try await server.makeProvider().download(resuming: value, to: folder.appendingPathComponent("f"))
        }
        #expect(server.requests.isEmpty)
    }
}
