import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download of a presigned URL: its query carries a signature and a token.
private struct SignedDownload: Endpoint {
    var signature = "SECRETSIGNATURE1"
    var baseURL: URL { URL(string: "https://bucket.example.com/")! }
    var path: String { "/blobs/big.bin" }
    var queryItems: [URLQueryItem] {
        [
            URLQueryItem(name: "X-Amz-Expires", value: "3600"), URLQueryItem(name: "X-Amz-Signature", value: signature),
            URLQueryItem(name: "sig", value: "SECRETSIG2"), URLQueryItem(name: "token", value: "SECRETTOKEN3"),
        ]
    }
}

@Suite("A stored ResumableDownload keeps no hidden query value in the clear", SuiteTimeLimit.oneMinute)
struct ResumableDownloadSecretsTests {
    /// A value kept at 6,000 of the 10,000 bytes of `file`, served by `server` at the signed URL.
    private func interrupted(in folder: URL, server: MockServer) async throws -> ResumableDownload {
        do {
            _ = try await server.makeProvider().download(SignedDownload(), to: folder.appendingPathComponent("big.bin"), resuming: nil)
        } catch let interrupted as DownloadInterrupted {
            return interrupted.resumable
        }
        Issue.record("the download did not throw DownloadInterrupted")
        throw CancellationError()
    }

    @Test func theEncodedFormKeepsDigestsOfTheSignedQueryValuesAndResumesWithTheSameEndpointGivenAgain() async throws {
        // GIVEN a download of a presigned URL that drops at 6,000 bytes
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        let value = try await interrupted(in: folder, server: server)
        // WHEN its value is encoded, as an app stores it
        let stored = try JSONEncoder().encode(value)
        let json = try #require(String(data: stored, encoding: .utf8))
        // THEN no secret value reaches the stored form, only its SHA-256 digest; the rest of the URL does
        #expect(!json.contains("SECRET"))
        #expect(json.contains("X-Amz-Expires=3600"))
        #expect(json.contains("X-Amz-Signature=sha256-\(SHA256.hex("SECRETSIGNATURE1"))"))
        #expect(json.contains("token=sha256-\(SHA256.hex("SECRETTOKEN3"))"))
        // and neither does its description, nor the error's, which apps log
        #expect(!value.description.contains("SECRET"))
        #expect(!DownloadInterrupted(resumable: value, underlying: NetworkError.cancelled).description.contains("SECRET"))
        #expect(json.contains("blobs"))
        // WHEN it is read back "after a relaunch"
        let restored = try JSONDecoder().decode(ResumableDownload.self, from: stored)
        #expect(!restored.url.absoluteString.contains("SECRET"))
        #expect(restored.bytesReceived == 6_000 && restored.validator == "\"v1\"")
        // THEN it cannot be sent without the endpoint: the typed error says so, and nothing was sent
        let sent = server.requests.count
        await #expect(throws: NetworkError.self) {
            _ = try await server.makeProvider().download(resuming: restored, to: folder.appendingPathComponent("big.bin"))
        }
        #expect(server.requests.count == sent)
        // and with the same endpoint given again, it asks only for the rest and the file ends whole
        let destination = folder.appendingPathComponent("big.bin")
        _ = try await server.makeProvider().download(SignedDownload(), to: destination, resuming: restored)
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(server.requests.last?.url.absoluteString.contains("SECRETSIGNATURE1") == true)
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["big.bin"])
    }

    @Test(arguments: [false, true])
    func aURLSignedAfreshIsAnotherURLTheDownloadStartsAgainAndTheOldPartialFileGoes(encoded: Bool) async throws {
        // GIVEN a value kept at 6,000 bytes of a presigned URL (stored and read back, or kept in memory)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let file = ServedFile(body, drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        let kept = try await interrupted(in: folder, server: server)
        let value = encoded ? try JSONDecoder().decode(ResumableDownload.self, from: JSONEncoder().encode(kept)) : kept
        // WHEN the URL, signed afresh (another signature), is downloaded with it
        let destination = folder.appendingPathComponent("big.bin")
        _ = try await server.makeProvider().download(SignedDownload(signature: "SECRETSIGNATURE9"), to: destination, resuming: value)
        // THEN the URL is not the value's: the whole body was asked for, and the file is whole
        #expect(server.requests.last?.header("Range") == nil)
        #expect(try Data(contentsOf: destination) == body)
        // and the value's partial file, which nothing can continue, is not left beside the destination
        #expect(try folderContents(folder) == ["big.bin"])
    }

    @Test func twoURLsThatDifferOnlyInASecretQueryValueAreNeverSplicedRFC9110_13_1_5() async throws {
        // GIVEN a value kept at 6,000 bytes of `download?key=reports/2024.pdf`, stored and read back, and a
        // server whose files share a validator (`ETag: "v1"`)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = fileBody(10_000)
        let second = fileBody(10_000, seed: 0x5A)
        let files = ["reports/2024.pdf": ServedFile(first, drops: [6_000]), "reports/2025.pdf": ServedFile(second)]
        let server = MockServer()
        server.stub(.get, "/v1/download") { request in
            let key = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "key" }?.value ?? ""
            return files[key]?.response(to: request) ?? MockResponse(statusCode: 404)
        }
        let endpoint = { (key: String) in
            FileDownload(baseURL: URL(string: "https://api.example.com/v1/download?key=\(key)")!, path: "")
        }
        let destination = folder.appendingPathComponent("report.pdf")
        var kept: ResumableDownload?
        do {
            _ = try await server.makeProvider().download(endpoint("reports/2024.pdf"), to: destination, resuming: nil)
        } catch let interrupted as DownloadInterrupted {
            kept = interrupted.resumable
        }
        let value = try JSONDecoder().decode(ResumableDownload.self, from: JSONEncoder().encode(try #require(kept)))
        // WHEN the other file is downloaded with it
        _ = try await server.makeProvider().download(endpoint("reports/2025.pdf"), to: destination, resuming: value)
        // THEN its URL is not the value's: no range was asked, and the file is the second one, whole
        #expect(server.requests.last?.header("Range") == nil)
        #expect(try Data(contentsOf: destination) == second)
        #expect(try folderContents(folder) == ["report.pdf"])
    }

    @Test func aValueNotEncodedKeepsItsURLAndResumesOnItsOwn() async throws {
        // GIVEN a value of a presigned URL kept in memory
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ServedFile(fileBody(10_000), drops: [6_000])
        let server = MockServer()
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        let value = try await interrupted(in: folder, server: server)
        // WHEN it is resumed as it is, THEN the request goes to its whole URL and asks for the rest
        #expect(value.url.absoluteString.contains("X-Amz-Signature=SECRETSIGNATURE1"))
        _ = try await server.makeProvider().download(resuming: value, to: folder.appendingPathComponent("big.bin"))
        #expect(server.requests.last?.header("Range") == "bytes=6000-")
        #expect(server.requests.last?.url.absoluteString.contains("SECRETSIGNATURE1") == true)
    }

    @Test func aValueStoredByThePreviousVersionStillDecodesAndResumesAndIsStoredAgainWithoutItsSecrets() async throws {
        // GIVEN a partial file and the value an earlier version stored for it, its whole signed URL included
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let partial = folder.appendingPathComponent(".networking-\(UUID().uuidString).download")
        try body.prefix(6_000).write(to: partial)
        let url = "https://bucket.example.com/blobs/big.bin?X-Amz-Expires=3600&X-Amz-Signature=SECRETSIGNATURE1&sig=SECRETSIG2&token=SECRETTOKEN3"
        let old = """
            {"url":"\(url)","validator":"\\"v1\\"","partialFile":"\(partial.absoluteString)","bytesReceived":6000,\
            "totalBytes":10000,"deadline":300,"maximumResponseSize":1000000}
            """
        // WHEN it is decoded
        let value = try JSONDecoder().decode(ResumableDownload.self, from: Data(old.utf8))
        // THEN every field is as it was stored
        #expect(value.url.absoluteString == url)
        #expect(value.validator == "\"v1\"" && value.bytesReceived == 6_000 && value.totalBytes == 10_000)
        #expect(value.deadline == 300 && value.maximumResponseSize == 1_000_000)
        #expect(value.partialFile.lastPathComponent == partial.lastPathComponent)
        // and storing it again keeps no secret
        let again = try #require(String(data: try JSONEncoder().encode(value), encoding: .utf8))
        #expect(!again.contains("SECRET"))
        // and it resumes on its own, as it did
        let file = ServedFile(body)
        let server = MockServer()
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        let destination = folder.appendingPathComponent("big.bin")
        _ = try await server.makeProvider().download(resuming: value, to: destination)
        #expect(server.requests.map { $0.header("Range") } == ["bytes=6000-"])
        #expect(try Data(contentsOf: destination) == body)
    }

    @Test func aValueStoredByThePreviousVersionResumesWithItsEndpoint() async throws {
        // GIVEN a partial file and the value an earlier version stored for it, its whole signed URL included
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = fileBody(10_000)
        let partial = folder.appendingPathComponent(".networking-\(UUID().uuidString).download")
        try body.prefix(6_000).write(to: partial)
        let url = "https://bucket.example.com/blobs/big.bin?X-Amz-Expires=3600&X-Amz-Signature=SECRETSIGNATURE1&sig=SECRETSIG2&token=SECRETTOKEN3"
        let old = """
            {"url":"\(url)","validator":"\\"v1\\"","partialFile":"\(partial.absoluteString)","bytesReceived":6000,"totalBytes":10000}
            """
        let value = try JSONDecoder().decode(ResumableDownload.self, from: Data(old.utf8))
        // WHEN its endpoint is downloaded with it
        let file = ServedFile(body)
        let server = MockServer()
        server.stub(.get, "/blobs/big.bin") { file.response(to: $0) }
        let destination = folder.appendingPathComponent("big.bin")
        _ = try await server.makeProvider().download(SignedDownload(), to: destination, resuming: value)
        // THEN it asked only for the rest, and the file ends whole
        #expect(server.requests.map { $0.header("Range") } == ["bytes=6000-"])
        #expect(try Data(contentsOf: destination) == body)
        #expect(try folderContents(folder) == ["big.bin"])
    }
}
