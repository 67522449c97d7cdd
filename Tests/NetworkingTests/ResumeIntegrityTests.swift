import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A provider on `server` that retries dropped downloads at once (delays recorded, never waited for).
private func retryingProvider(_ server: MockServer, retries: Int = 3, maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts)
    -> NetworkProvider
{
    server.makeProvider(interceptor: RetryPolicy(retryLimit: retries), maximumAttempts: maximumAttempts, sleep: RecordedDelays().sleep)
}

/// The `Range` header of every request `server` got, `nil` for none.
private func ranges(_ server: MockServer) -> [String?] {
    server.requests.map { $0.header("Range") }
}

/// The file's second version: as long as the first, other bytes.
private let secondVersion = fileBody(10_000, seed: 0x5A)

@Suite("A resumed download never splices two versions nor ends short", SuiteTimeLimit.oneMinute)
struct ResumeIntegrityTests {
    @Test func aServerThatIgnoresIfRangeAfterTheFileChangedIsNotSplicedRFC9110_13_1_5() async throws {
        // GIVEN a server that ignores If-Range, whose file is replaced (ETag "v2", other bytes) after its
        // first answer dropped at 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000], handling: .ignoresIfRange)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { request in
            let answer = file.response(to: request)
            file.change(to: secondVersion, headers: ["ETag": "\"v2\""])
            return answer
        }
        // WHEN the download is retried: the server answers the range with a 206 of version 2
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN that 206 was not appended to version 1's bytes: the file was fetched again, whole, as version 2
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == secondVersion)
        #expect(try folderContents(folder) == ["f"])
    }

    /// The first answer's validators, and those of the 206 of the changed file: none of them is the kept
    /// bytes' strong validator (RFC 9110 §8.8.3.2: strong comparison; a weak tag never matches).
    static let mismatchedValidators: [(first: [String: String], partial: [String: String])] = [
        (["ETag": "\"v1\""], [:]),
        (["ETag": "\"v1\""], ["ETag": "W/\"v1\""]),
        (["ETag": "\"v1\""], ["ETag": "\"v2\""]),
        (
            ["Last-Modified": "Tue, 15 Nov 1994 08:12:21 GMT", "Date": "Tue, 15 Nov 1994 08:12:31 GMT"],
            ["Last-Modified": "Tue, 15 Nov 1994 09:00:00 GMT", "Date": "Tue, 15 Nov 1994 09:00:10 GMT"]
        ),
        (["Last-Modified": "Tue, 15 Nov 1994 08:12:21 GMT", "Date": "Tue, 15 Nov 1994 08:12:31 GMT"], ["Date": "Tue, 15 Nov 1994 09:00:10 GMT"]),
    ]

    @Test(arguments: mismatchedValidators)
    func a206WithoutTheKeptBytesStrongValidatorIsNotAppendedRFC9110_13_1_5(first: [String: String], partial: [String: String]) async throws {
        // GIVEN a file that drops at 6,000 bytes and is then replaced by a version served with `partial`, by a
        // server that ignores If-Range
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), headers: first, drops: [6_000], handling: .ignoresIfRange)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { request in
            let answer = file.response(to: request)
            file.change(to: secondVersion, headers: partial)
            return answer
        }
        // WHEN the download is retried
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the 206 was refused and the file fetched again from its first byte: one version, whole
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == secondVersion)
    }

    @Test(arguments: [true, false])
    func a206ThatStopsShortOfTheKnownEndIsResumedAgainFromWhereItStoppedRFC9110_14_4(declaresTotal: Bool) async throws {
        // GIVEN a 10,000-byte file whose first answer drops at 6,000, from a server that sends at most 2,000
        // bytes a range (`bytes 6000-7999/10000`, or `/*`)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .caps(2_000, declaresTotal: declaresTotal))
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the short 206 was kept and the rest asked for until the file's known end: the file is whole
        #expect(ranges(server) == [nil, "bytes=6000-", "bytes=8000-"])
        #expect(try Data(contentsOf: destination) == body)
        #expect(file.bytesSent == 10_000)
    }

    @Test func aShort206WithNoAttemptLeftIsAnInterruptionNeverASuccessWithAShortFile() async throws {
        // GIVEN a value kept at 6,000 of 10,000 bytes, and a server that sends at most 2,000 bytes a range with `/*`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .caps(2_000, declaresTotal: false))
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let destination = folder.appendingPathComponent("f")
        var kept: ResumableDownload?
        do {
            _ = try await server.makeProvider().download(FileDownload(), to: destination, resuming: nil)
        } catch let interrupted as DownloadInterrupted {
            kept = interrupted.resumable
        }
        let value = try #require(kept)
        // WHEN a provider allowed one attempt a call resumes it
        // THEN the call does not succeed with 8,000 bytes: it is interrupted, keeping them, and nothing is at the destination
        do {
            _ = try await server.makeProvider(maximumAttempts: 1).download(FileDownload(), to: destination, resuming: value)
            Issue.record("a short file was reported as a success")

        } catch let interrupted as DownloadInterrupted {
            #expect(interrupted.resumable.bytesReceived == 8_000)
            #expect(try Data(contentsOf: interrupted.resumable.partialFile) == body.prefix(8_000))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        // and a later call finishes it with the last range
        _ = try await server.makeProvider().download(FileDownload(), to: destination, resuming: nil)
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test(arguments: [1_500, 6_000])
    func a206WhoseBodyIsNotTheLengthItsContentRangeSaysIsNeverReportedWhole(bodyLength: Int) async throws {
        // GIVEN a file whose first answer drops at 6,000, and whose next 206 declares `bytes 6000-9999/10000`
        // without a Content-Length but sends `bodyLength` bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        let mangled = Recorder<Int>()
        server.stub(.get, "/v1/files/big.bin") { request in
            var answer = file.response(to: request)
            guard answer.statusCode == 206, mangled.all.isEmpty else { return answer }
            mangled.append(1)
            answer.headers["Content-Length"] = nil
            let bytes = (body + body).subdata(in: 6_000..<(6_000 + bodyLength))
            answer.chunks = [(bytes, 0)]
            return answer
        }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN a short body was kept and the rest asked for; a long one was dropped and the file fetched again
        let expected: [String?] = bodyLength < 4_000 ? [nil, "bytes=6000-", "bytes=\(6_000 + bodyLength)-"] : [nil, "bytes=6000-", nil]
        #expect(ranges(server) == expected)
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func a206WhoseCompleteLengthContradictsTheKnownOneRestartsRFC9110_14_4() async throws {
        // GIVEN a 10,000-byte file whose next 206 says `bytes 6000-11999/12000`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { request in
            var answer = file.response(to: request)
            if answer.statusCode == 206 { answer.headers["Content-Range"] = "bytes 6000-9999/12000" }
            return answer
        }
        // WHEN it is downloaded with retries, THEN the 206 was refused and the file fetched again whole
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func a206WithAnUnknownCompleteLengthNeverCompletesAFileOfUnknownLengthRFC9110_14_4() async throws {
        // GIVEN a 10,000-byte file served chunked (no Content-Length) whose first answer drops at 6,000, from a
        // server whose 206s hold at most 2,000 bytes and say `bytes 6000-7999/*`: nothing tells where the file ends
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .caps(2_000, declaresTotal: false), declaresLength: false)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the 206 that cannot be proven to reach the end was refused (`*`: the complete length is unknown,
        // RFC 9110 §14.4), and the file fetched again from its first byte: never 8,000 bytes reported whole
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["f"])
    }

    @Test func a206WithAnUnknownCompleteLengthIsNotAppendedToAValueOfUnknownLengthRFC9110_14_4() async throws {
        // GIVEN a value kept at 6,000 bytes of a file served chunked (its length unknown), and a server whose
        // 206s hold at most 2,000 bytes with `/*`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000], handling: .caps(2_000, declaresTotal: false), declaresLength: false)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { file.response(to: $0) }
        let destination = folder.appendingPathComponent("f")
        var kept: ResumableDownload?
        do {
            _ = try await server.makeProvider().download(FileDownload(), to: destination, resuming: nil)
        } catch let interrupted as DownloadInterrupted {
            kept = interrupted.resumable
        }
        let value = try #require(kept)
        #expect(value.totalBytes == nil)
        // WHEN a provider allowed one attempt a call resumes it
        // THEN the call does not succeed with 8,000 bytes, and keeps no spliced bytes
        await #expect(throws: (any Error).self) {
            _ = try await server.makeProvider(maximumAttempts: 1).download(FileDownload(), to: destination, resuming: value)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try folderContents(folder).isEmpty)
    }

    /// A plain `GET` (no `Range` asked) answered with a 206 of `contentRange`, `count` bytes of the file (a proxy
    /// that answers with part of the file), then with the whole file.
    private func proxied206(_ contentRange: String, count: Int, body: Data) -> MockServer {
        let file = ServedFile(body)
        let server = MockServer()
        let answered = Recorder<Int>()
        server.stub(.get, "/v1/files/big.bin") { request in
            guard answered.all.isEmpty else { return file.response(to: request) }
            answered.append(1)
            return MockResponse(
                statusCode: 206, headers: ["ETag": "\"v1\"", "Content-Range": contentRange, "Content-Length": "\(count)"],
                body: body.prefix(count))
        }
        return server
    }

    @Test(arguments: ["bytes 0-4999/10000", "bytes 0-4999/*", "bytes 5000-9999/10000"])
    func a206ThatAnswersAPlainGETWithPartOfTheFileIsNeverTheWholeFileRFC9110_15_3_7(contentRange: String) async throws {
        // GIVEN a server (a proxy) that answers a GET that asked for no range with a 206 of 5,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let server = proxied206(contentRange, count: 5_000, body: body)
        // WHEN the file is downloaded
        let destination = folder.appendingPathComponent("f")
        _ = try await server.makeProvider().download(FileDownload(), to: destination)
        // THEN the part was refused and the file fetched again from its first byte, whole
        #expect(ranges(server) == [nil, nil])
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["f"])
    }

    @Test func a206ThatAnswersAPlainGETWithTheWholeFileIsTheFileRFC9110_14_4() async throws {
        // GIVEN a server that answers a GET that asked for no range with `206 bytes 0-9999/10000`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let server = proxied206("bytes 0-9999/10000", count: 10_000, body: body)
        // WHEN the file is downloaded, THEN that 206 is the whole representation: it is the file
        let destination = folder.appendingPathComponent("f")
        _ = try await server.makeProvider().download(FileDownload(), to: destination)
        #expect(ranges(server) == [nil])
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func a206OfPartOfTheFileToEveryPlainGETFailsTheCallWithNoFileLeft() async throws {
        // GIVEN a server that answers every GET with `206 bytes 0-4999/10000`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let server = MockServer()
        server.stub(.get, "/v1/files/big.bin") { _ in
            MockResponse(
                statusCode: 206, headers: ["ETag": "\"v1\"", "Content-Range": "bytes 0-4999/10000", "Content-Length": "5000"],
                body: body.prefix(5_000))
        }
        // WHEN the file is downloaded, THEN the call fails, and leaves no file behind
        let destination = folder.appendingPathComponent("f")
        await #expect(throws: NetworkError.self) {
            _ = try await server.makeProvider().download(FileDownload(), to: destination)
        }
        #expect(try folderContents(folder).isEmpty)
    }

    @Test func a206ToAnEndpointThatDoesNotAcceptItStillFailsWithItsStatus() async throws {
        // GIVEN an endpoint that accepts only 200, and a server that answers with `206 bytes 0-4999/10000`
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = proxied206("bytes 0-4999/10000", count: 5_000, body: fileBody(10_000))
        let endpoint = FileDownload(acceptableStatusCodes: [200])
        // WHEN the file is downloaded, THEN the status is refused as any other it does not accept, at once
        await #expect(throws: NetworkError.invalidStatusCode(206)) {
            _ = try await server.makeProvider().download(endpoint, to: folder.appendingPathComponent("f"))
        }
        #expect(ranges(server) == [nil])
        #expect(try folderContents(folder).isEmpty)
    }
}
