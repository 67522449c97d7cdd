import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What `POST /upload/multipart` read back, part by part.
struct ServerPart: Decodable, Equatable {
    let name: String
    let filename: String
    let contentType: String
    let size: Int
    let checksum: String
    let text: String
}

struct ServerParts: Decodable {
    let parts: [ServerPart]
}

struct ServerUpload: Decodable {
    let size: Int
    let checksum: String
    let contentLength: String
    /// The request's `Transfer-Encoding` ("" when none); `PUT /upload/raw` only.
    let transferEncoding: String?
    /// The request's `Idempotency-Key` ("" when none); `PUT /upload/raw` only.
    let idempotencyKey: String?
}

/// A scratch folder, removed by the caller.
func makeScratchFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-it-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// Writes a file of `megabytes` MiB of varied bytes, 1 MiB at a time.
func writeFile(_ url: URL, megabytes: Int) throws {
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) })
    for index in 0..<megabytes {
        block[0] = UInt8(truncatingIfNeeded: index)
        try handle.write(contentsOf: block)
    }
}

/// The temporary multipart copies the provider left (it should leave none).
func spooledCopies() throws -> Set<String> {
    Set(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter { $0.hasSuffix(".multipart") })
}

/// Runs `body` while sampling this process's resident memory every 20 ms; returns its result and the
/// peak growth in MiB over the memory before it started.
func measuringPeakMemory<T: Sendable>(_ body: () async throws -> T) async throws -> (T, Double) {
    let baseline = residentMemoryMiB() ?? 0
    let sampler = Task {
        var peak = baseline
        while !Task.isCancelled {
            peak = max(peak, residentMemoryMiB() ?? 0)
            try? await Task.sleep(nanoseconds: 20_000_000)   // cancelled at the end: nothing to report
        }
        return peak
    }
    do {
        let result = try await body()
        sampler.cancel()
        return (result, await sampler.value - baseline)
    } catch {
        sampler.cancel()
        throw error
    }
}

@Suite("Transfers over TCP", .serialized, .timeLimit(.minutes(5)))
struct TransferTests {
    @Test func aMultipartFormIsParsedByMultipartKitExactlyAndResentWithTheSameBytesAfterA401() async throws {
        try await withServer { server in
            // GIVEN a signed-in client whose token the server has just expired, and a form with
            // non-ASCII names, a text field and a file
            let client = LiveClient(server)
            try await client.signIn()
            try await client.admin("expire")
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let photo = folder.appendingPathComponent("프로필 😀.jpg")
            try writeFile(photo, megabytes: 3)
            let form = MultipartForm([.text("닉네임", "홍길동 🎉"), .file("사진", at: photo)])
            // WHEN it is uploaded
            let response = try await client.provider.response(client.call("/upload/multipart", .post, body: .multipart(form)))
            let parts = try JSONDecoder().decode(ServerParts.self, from: response.data).parts
            // THEN one refresh happened and multipart-kit read every part back exactly
            #expect(await server.state.refreshCount == 1)
            let photoChecksum = try TestServer.Checksum.of(file: photo)
            #expect(parts.map(\.name) == ["닉네임", "사진"])
            #expect(parts[0].text == "홍길동 🎉")
            #expect(parts[0].contentType == "")
            #expect(parts[1].filename == "프로필 😀.jpg")
            #expect(parts[1].contentType == "image/jpeg")
            #expect(parts[1].size == photoChecksum.size)
            #expect(parts[1].checksum == photoChecksum.hex)
        }
    }

    /// A server may answer before it reads the body (RFC 9112 §9.6 lets it close the connection after a final
    /// answer): here a 401 to an expired token. On Linux, FoundationNetworking's upload tasks from a file could
    /// end the process when a transfer ended while a read of the file was pending (Docs/Limits.md); a small file
    /// is sent from memory with its Content-Length, a large one streamed chunked.
    @Test(arguments: [1, 24])
    func aFileBodyAnsweredBeforeItWasReadIsSentAgainWholeAfterOneRefresh(megabytes: Int) async throws {
        try await withServer { server in
            // GIVEN a client whose token the server has just expired, and a file
            let client = LiveClient(server)
            try await client.signIn()
            try await client.admin("expire")
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("scan.pdf")
            try writeFile(file, megabytes: megabytes)
            let expected = try TestServer.Checksum.of(file: file)
            // WHEN it is uploaded: the first attempt is refused with a 401 before its body is read
            let response = try await client.provider.response(
                client.call("/upload/raw", .put, body: .file(file, contentType: "application/pdf")))
            let upload = try JSONDecoder().decode(ServerUpload.self, from: response.data)
            // THEN one refresh happened and the second attempt carried every byte
            #expect(await server.state.refreshCount == 1)
            #expect(upload.size == expected.size)
            #expect(upload.checksum == expected.hex)
            // framed by its Content-Length, except on Linux over 8 MiB (chunked, RFC 9112 §7.1)
            #if canImport(FoundationNetworking)
                let chunked = megabytes > 8
            #else
                let chunked = false
            #endif
            #expect(upload.contentLength == (chunked ? "" : String(expected.size)))
            #expect(upload.transferEncoding == (chunked ? "chunked" : ""))
        }
    }

    @Test func aLargeFileIsUploadedFromDiskWithProgressAndFlatMemory() async throws {
        try await withServer { server in
            // GIVEN a 512 MiB file
            let client = LiveClient(server)
            try await client.signIn()
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("video.bin")
            try writeFile(file, megabytes: 512)
            let expected = try TestServer.Checksum.of(file: file)
            // WHEN it is uploaded as a file body while progress is read
            let (progress, reporter) = TransferProgress.makeStream()
            let steps = Task {
                var seen: [TransferProgress] = []
                for await step in progress { seen.append(step) }
                return seen
            }
            let (response, growth) = try await measuringPeakMemory {
                try await client.provider.upload(
                    client.call("/upload/raw", .put, body: .file(file, contentType: "application/octet-stream")),
                    progress: reporter)
            }
            let upload = try JSONDecoder().decode(ServerUpload.self, from: response.data)
            let seen = await steps.value
            print("upload 512 MiB file: peak RSS growth \(String(format: "%.1f", growth)) MiB, \(seen.count) progress values")
            // THEN the server got every byte, and memory stayed flat. Framed by Content-Length on Apple platforms;
            // on Linux a file over 8 MiB is streamed chunked, without it (RFC 9112 §6.2; Docs/Limits.md)
            #expect(upload.size == expected.size)
            #expect(upload.checksum == expected.hex)
            #if canImport(FoundationNetworking)
                #expect(upload.contentLength == "")
                #expect(upload.transferEncoding == "chunked")
            #else
                #expect(upload.contentLength == String(expected.size))
            #endif
            #expect(growth < 64)
            // and progress went forward to the whole size
            #expect(seen.count > 2)
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
            #expect(seen.last == TransferProgress(completedBytes: Int64(expected.size), totalBytes: Int64(expected.size)))
        }
    }

    /// (multipart-kit's parser is too slow in a debug build for 256 MiB; the server reads this one-part
    /// form's framing itself, and the test above has multipart-kit read a form with several parts.)
    @Test func aLargeMultipartFormIsStreamedFromATemporaryCopyThatIsRemoved() async throws {
        try await withServer { server in
            let client = LiveClient(server)
            try await client.signIn()
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("archive.zip")
            try writeFile(file, megabytes: 256)
            let expected = try TestServer.Checksum.of(file: file)
            let copiesBefore = try spooledCopies()
            let (response, growth) = try await measuringPeakMemory {
                try await client.provider.response(
                    client.call(
                        "/upload/single-part", .post,
                        body: .multipart(MultipartForm([.file("archive", at: file)]))))
            }
            struct SinglePart: Decodable {
                let size: Int
                let checksum: String
                let opensWithBoundary: Bool
            }
            let part = try JSONDecoder().decode(SinglePart.self, from: response.data)
            print("multipart 256 MiB file: peak RSS growth \(String(format: "%.1f", growth)) MiB")
            #expect(part.opensWithBoundary)
            #expect(part.size == expected.size)
            #expect(part.checksum == expected.hex)
            #expect(growth < 64)
            #expect(try spooledCopies().isSubset(of: copiesBefore))   // none left (a day-old leftover may be swept)
        }
    }

    @Test(arguments: [false, true])
    func aLargeDownloadLandsWholeWithFlatMemory(chunked: Bool) async throws {
        try await withServer { server in
            // GIVEN 1 GiB to download, with or without a Content-Length
            let client = LiveClient(server)
            try await client.signIn()
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("download.bin")
            let (progress, reporter) = TransferProgress.makeStream()
            let steps = Task {
                var seen: [TransferProgress] = []
                for await step in progress { seen.append(step) }
                return seen
            }
            // WHEN it is downloaded
            let (_, growth) = try await measuringPeakMemory {
                try await client.provider.download(
                    client.call("/download", queryItems: ["mb": "1024", "chunked": chunked ? "1" : "0"]),
                    to: destination, progress: reporter)
            }
            let seen = await steps.value
            print("download 1 GiB (chunked: \(chunked)): peak RSS growth \(String(format: "%.1f", growth)) MiB")
            // THEN the file is whole and in order, only it is in the folder, and memory stayed flat
            let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int
            #expect(size == 1_024 << 20)
            let handle = try FileHandle(forReadingFrom: destination)
            defer { try? handle.close() }
            for offset in stride(from: 0, to: 1_024 << 20, by: 37 << 16) {
                try handle.seek(toOffset: UInt64(offset))
                #expect(try handle.read(upToCount: 1)?.first == TestServer.downloadByte(at: offset))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["download.bin"])
            // Chunks that URLSession has received but the delegate's queue has not yet written wait in memory:
            // over loopback, faster than any network, that backlog reached 7 to 61 MiB with a Content-Length
            // and up to 257 MiB chunked (debug build, 2 CPUs shared with the server). Never the whole body.
            #expect(growth < 512)
            #expect(seen.last?.completedBytes == 1_024 << 20)
            #expect(seen.allSatisfy { $0.totalBytes == (chunked ? nil : 1_024 << 20) })
        }
    }

    @Test func serverSentEventsArriveOneByOneAsTheServerSendsThem() async throws {
        try await withServer { server in
            // GIVEN an expired token and an event stream whose events after the first wait for a signal
            let client = LiveClient(server)
            try await client.signIn()
            try await client.admin("expire")
            // WHEN the stream is opened and read
            let stream = try await client.provider.stream(client.call("/events", queryItems: ["count": "4", "ms": "30"]))
            var events: [ServerSentEvent] = []
            for try await event in stream.events {
                events.append(event)
                // the first event is here before the server sent the rest: it was not buffered
                if events.count == 1 { _ = try await client.plain.response(client.call("/events/open", .post)) }
            }
            // THEN one refresh preceded the stream, and every event came whole, UTF-8 included
            #expect(await server.state.refreshCount == 1)
            #expect(await server.state.eventGatePassedOpen == [true])
            #expect(stream.response.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
            #expect(events.map(\.data) == ["1", "2\n한글 😀", "3\n한글 😀", "4\n한글 😀"])
            #expect(events.map(\.id) == ["1", "2", "3", "4"])
            #expect(Set(events.map(\.event)) == ["tick"])
        }
    }

    @Test func cancellingAnUploadOrADownloadMidwayLeavesNoFilesAndNeverRefreshes() async throws {
        try await withServer { server in
            let client = LiveClient(server)
            try await client.signIn()
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let copiesBefore = try spooledCopies()

            // a download that trickles, cancelled after its first bytes
            let downloads = folder.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            let (progress, reporter) = TransferProgress.makeStream()
            let download = Task {
                try await client.provider.download(
                    client.call("/download/slow", queryItems: ["chunks": "200", "ms": "50"]),
                    to: downloads.appendingPathComponent("slow.bin"), progress: reporter)
            }
            for await step in progress where step.completedBytes > 0 { break }
            download.cancel()
            await #expect { _ = try await download.value } throws: { if case NetworkError.cancelled = $0 { true } else { false } }
            #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)

            // a multipart upload of a large file, cancelled once some of it was sent
            let file = folder.appendingPathComponent("big.bin")
            try writeFile(file, megabytes: 512)
            let (uploadProgress, uploadReporter) = TransferProgress.makeStream()
            let upload = Task {
                try await client.provider.upload(
                    client.call("/upload/slow", .post, body: .multipart(MultipartForm([.file("big", at: file)]))),
                    progress: uploadReporter)
            }
            for await step in uploadProgress where step.completedBytes > 0 { break }
            upload.cancel()
            await #expect { _ = try await upload.value } throws: { if case NetworkError.cancelled = $0 { true } else { false } }
            #expect(try spooledCopies().isSubset(of: copiesBefore))   // none left (a day-old leftover may be swept)
            #expect(await server.state.refreshCount == 0)
        }
    }
}

extension LiveClient {
    func call(_ path: String, _ method: HTTPMethod = .get, queryItems: [String: String]) -> Call {
        var call = call(path, method)
        call.queryItems = queryItems.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        return call
    }
}
