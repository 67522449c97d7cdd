import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Serves `resource` at ``FileDownload``'s path; the first answer's body is cut after `dropAfter` bytes and
/// the connection lost there; `then` runs after that first answer (e.g. to replace the file).
private func serve(
    _ resource: MockResource, on server: MockServer, dropAfter bytes: Int, then change: (@Sendable () -> Void)? = nil
) {
    let answered = Recorder<Int>()
    server.stub(.get, "/v1/files/big.bin") { request in
        var answer = resource.response(to: request)
        answered.append(answer.statusCode)
        guard answered.count == 1 else { return answer }
        change?()
        answer.headers["Content-Length"] = String(answer.body.count)
        return .chunked(
            [answer.body.prefix(bytes)], statusCode: answer.statusCode, headers: answer.headers,
            failingWith: URLError(.networkConnectionLost))
    }
}

/// A provider on `server` that retries a dropped download at once (delays recorded, never waited for).
private func retryingProvider(_ server: MockServer) -> NetworkProvider {
    server.makeProvider(interceptor: RetryPolicy(retryLimit: 3), sleep: RecordedDelays().sleep)
}

/// The `Range` header of every request `server` got, `nil` for none.
private func ranges(_ server: MockServer) -> [String?] {
    server.requests.map { $0.header("Range") }
}

/// The file's first and second versions.
private let version1 = fileBody(10_000)
private let version2 = fileBody(10_000, seed: 0x5A)

@Suite("A download resumed through MockResource (RFC 9110 §14.2, §13.1.5)", SuiteTimeLimit.oneMinute)
struct MockResourceRangeDownloadTests {
    @Test func aDroppedDownloadResumesWithA206OfTheRestRFC9110_15_3_7() async throws {
        // GIVEN a 10,000-byte file with a strong ETag whose first answer drops after 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: version1, etag: "\"v1\"")
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000)
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("big.bin")
        let response = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the retry asked for the rest of version 1 and the mock answered it with a 206: the file is whole
        #expect(response.statusCode == 206)
        #expect(ranges(server) == [nil, "bytes=6000-"])
        #expect(server.requests.last?.header("If-Range") == "\"v1\"")
        #expect(file.partialResponses == 1 && file.fullResponses == 1)
        #expect(try Data(contentsOf: destination) == version1)
        #expect(try folderContents(folder) == ["big.bin"])
    }

    @Test func aFileThatChangedRestartsWholeAsTheNewVersionNeverSplicedRFC9110_13_1_5() async throws {
        // GIVEN a file replaced by version 2 (ETag "v2") after its first answer dropped at 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: version1, etag: "\"v1\"")
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000) { file.update(body: version2, etag: "\"v2\"") }
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        let response = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the If-Range for version 1 got version 2 whole (200), which replaced the kept bytes
        #expect(response.statusCode == 200)
        #expect(ranges(server) == [nil, "bytes=6000-"])
        #expect(file.fullResponsesToRanges == 1 && file.partialResponses == 0)
        #expect(try Data(contentsOf: destination) == version2)
    }

    @Test func aServerThatIgnoresIfRangeIsRefusedAndTheFileIsOneVersionWholeRFC9110_13_1_5() async throws {
        // GIVEN a server that ignores If-Range, whose file is replaced after the first answer dropped
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: version1, etag: "\"v1\"")
        file.rangeBehaviour = .ignoringIfRange
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000) { file.update(body: version2, etag: "\"v2\"") }
        // WHEN it is downloaded with retries: the range is answered with a 206 of version 2
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN that 206 was refused, not appended, and the file fetched again from its first byte
        #expect(file.partialResponses == 1)
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == version2)
        #expect(try folderContents(folder) == ["f"])
    }

    @Test func a416RestartsTheDownloadFromTheFirstByteRFC9110_15_5_17() async throws {
        // GIVEN a server that ignores If-Range whose file shrinks to 4,000 bytes after the first answer dropped
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let shorter = fileBody(4_000, seed: 0x33)
        let file = MockResource(body: version1, etag: "\"v1\"")
        file.rangeBehaviour = .ignoringIfRange
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000) { file.update(body: shorter, etag: "\"v2\"") }
        // WHEN it is downloaded with retries: bytes=6000- cannot be satisfied any more
        let destination = folder.appendingPathComponent("f")
        let response = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN the 416 dropped the kept bytes and the file was fetched whole
        #expect(response.statusCode == 200)
        #expect(file.unsatisfiableRangeResponses == 1)
        #expect(ranges(server) == [nil, "bytes=6000-", nil])
        #expect(try Data(contentsOf: destination) == shorter)
    }

    @Test(arguments: [false, true])
    func aCappedServerIsAskedForTheRestUntilTheEndRFC9110_14_4(omitsCompleteLength: Bool) async throws {
        // GIVEN a server that sends at most 2,000 bytes a range (with the complete length, or `*`)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: version1, etag: "\"v1\"")
        file.rangeBehaviour = MockResource.RangeBehaviour(maximumRangeLength: 2_000, omitsCompleteLength: omitsCompleteLength)
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000)
        // WHEN it is downloaded with retries
        let destination = folder.appendingPathComponent("f")
        _ = try await retryingProvider(server).download(FileDownload(), to: destination)
        // THEN each short 206 was kept and the rest asked for, until the file is whole
        #expect(ranges(server) == [nil, "bytes=6000-", "bytes=8000-"])
        #expect(file.partialResponses == 2)
        #expect(try Data(contentsOf: destination) == version1)
    }

    @Test func aServerThatIgnoresRangesRestartsTheFileFromItsFirstByte() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = MockResource(body: version1, etag: "\"v1\"")
        file.rangeBehaviour = .ignoringRanges
        let server = MockServer()
        serve(file, on: server, dropAfter: 6_000)
        let destination = folder.appendingPathComponent("f")
        let response = try await retryingProvider(server).download(FileDownload(), to: destination)
        #expect(response.statusCode == 200)
        #expect(ranges(server) == [nil, "bytes=6000-"])
        #expect(file.fullResponsesToRanges == 1 && file.partialResponses == 0)
        #expect(try Data(contentsOf: destination) == version1)
    }
}
