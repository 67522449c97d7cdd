import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A download of the test server's `/resume/{key}` file, a key of its own per value.
struct ResumeFile: Endpoint {
    let server: URL
    var query: [String: String]
    let key = UUID().uuidString
    var baseURL: URL { server }
    var path: String { "/resume/\(key)" }
    var queryItems: [URLQueryItem] { query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
    var deadline: TimeInterval? { 120 }
    var requiresAuthentication: Bool { false }
    var size: Int { Int(query["size"] ?? "") ?? 1 << 20 }
}

/// A provider that retries dropped connections at once (no backoff waited for), `retries` times.
private func retryingProvider(retries: Int = 3) -> NetworkProvider {
    NetworkProvider(
        configuration: .ephemeral, interceptor: RetryPolicy(retryLimit: retries), sleep: { _ in try Task.checkCancellation() })
}

/// The SHA-256 of `file` equals that of the server's file.
private func isServersFile(_ file: URL, size: Int, version: Int = 0) throws -> Bool {
    let local = try TestServer.Checksum.of(file: file)
    let served = TestServer.resumeChecksum(size: size, version: version)
    return local.size == served.size && local.hex == served.hex
}

@Suite("Resuming downloads over TCP", .serialized, .timeLimit(.minutes(5)))
struct ResumeTests {
    @Test func a64MiBDownloadThatDropsIsResumedByteIdenticalInBoundedMemory() async throws {
        try await withServer { server in
            // GIVEN a 64 MiB file with a strong ETag whose first answer drops after 41 MiB and a bit
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 64 << 20
            let drop = (41 << 20) + 12_345
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(drop)"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries, while memory is sampled
            let (response, peak) = try await measuringPeakMemory { try await retryingProvider().download(file, to: destination) }
            // THEN the retry asked for the rest with the ETag, and got it as a 206
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.count == 2)
            #expect(entries.first?.range == nil)
            let range = try #require(entries.last?.range)
            let resumedAt = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
            #expect(resumedAt > 0 && resumedAt <= drop)
            #expect(entries.last?.ifRange == "\"0-v0\"" && entries.last?.status == 206)
            #expect(response.statusCode == 206)
            // and the file is the server's, byte for byte; the server sent the file once, plus only what was
            // lost in flight when the connection closed (written by the server, never received: usually nothing)
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
            let sent = await TestServer.resumeLog.bytesSent(file.key)
            #expect(sent == size + (drop - resumedAt))
            // and memory stayed bounded: the kept 41 MiB were never read back, and the backlog URLSession
            // queues over loopback is at most what one attempt sends (measured: +17 to +42 MiB)
            #expect(peak < 64)
            print("resume 64 MiB: resumed at \(resumedAt) of drop \(drop); server sent \(sent) bytes (\(Double(sent) / Double(size))×); +\(peak) MiB peak")
        }
    }

    @Test func a64MiBFileFromAServerThatIgnoresRangesIsDownloadedAgainWhole() async throws {
        try await withServer { server in
            // GIVEN a 64 MiB file whose server answers every request with the whole file, dropping the first at 30 MiB
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 64 << 20
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(30 << 20)", "range": "ignores"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries
            let response = try await retryingProvider().download(file, to: destination)
            // THEN the retry asked for the rest, got the whole file with 200, and the file is the server's
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.map(\.status) == [200, 200])
            #expect(entries.last?.range?.hasPrefix("bytes=") == true)
            #expect(response.statusCode == 200)
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test func a64MiBFileThatChangesBetweenAttemptsEndsAsItsNewVersion() async throws {
        try await withServer { server in
            // GIVEN a 64 MiB file replaced after each answer (a new ETag and other bytes); the first drops at 20 MiB
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 64 << 20
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(20 << 20)", "changes": "1"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries
            _ = try await retryingProvider().download(file, to: destination)
            // THEN the retry's If-Range named the old version, the server sent the new one whole, and the file is it
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.map(\.status) == [200, 200])
            #expect(entries.last?.ifRange == "\"0-v0\"")
            #expect(try isServersFile(destination, size: size, version: 1))
            #expect(try !isServersFile(destination, size: size, version: 0))
        }
    }

    @Test func aLastModifiedValidatorResumesAndAWeakETagStartsAgain() async throws {
        try await withServer { server in
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 4 << 20
            // GIVEN two files that drop once: one with only a Last-Modified long before its Date, one with a weak ETag
            let modified = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(size / 2)", "validator": "modified"])
            let weak = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(size / 2)", "validator": "weak"])
            // WHEN both are downloaded with retries
            _ = try await retryingProvider().download(modified, to: folder.appendingPathComponent("modified.bin"))
            _ = try await retryingProvider().download(weak, to: folder.appendingPathComponent("weak.bin"))
            // THEN the first resumed with the date as If-Range; the second asked for the whole file again
            let resumed = await TestServer.resumeLog.entries(modified.key)
            #expect(resumed.last?.ifRange == "Sun, 06 Nov 1994 08:49:00 GMT" && resumed.last?.status == 206)
            let restarted = await TestServer.resumeLog.entries(weak.key)
            #expect(restarted.map(\.range) == [nil, nil])
            #expect(try isServersFile(folder.appendingPathComponent("modified.bin"), size: size))
            #expect(try isServersFile(folder.appendingPathComponent("weak.bin"), size: size))
        }
    }

    @Test func aDownloadDroppedThenCancelledIsFinishedByAThirdProviderFromItsStoredValue() async throws {
        try await withServer { server in
            // GIVEN an 8 MiB file sent slowly whose first answer drops at 3 MiB, and providers without retries
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 8 << 20
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(3 << 20)", "ms": "2"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN the first call drops
            var stored = Data()
            do {
                _ = try await NetworkProvider(configuration: .ephemeral).download(file, to: destination, resuming: nil)
                Issue.record("the first call did not fail")
            } catch let interrupted as DownloadInterrupted {
                // THEN it hands out a value, which the app stores
                #expect(interrupted.resumable.bytesReceived > 0)
                stored = try JSONEncoder().encode(interrupted.resumable)
            }
            // WHEN a second provider ("after a relaunch") continues it and is cancelled once bytes arrived
            let first = try JSONDecoder().decode(ResumableDownload.self, from: stored)
            let (progress, reporter) = TransferProgress.makeStream()
            let second = NetworkProvider(configuration: .ephemeral)
            let call = Task { try await second.download(resuming: first, to: destination, progress: reporter) }
            for await step in progress where step.completedBytes > first.bytesReceived + 65_536 { break }
            call.cancel()
            guard case .failure(let paused as DownloadInterrupted) = await call.result else {
                Issue.record("the cancelled call did not throw DownloadInterrupted")
                return
            }
            #expect(paused.underlying as? NetworkError == .cancelled)
            #expect(paused.resumable.bytesReceived > first.bytesReceived)
            // and a third provider finishes it from the value stored again
            let again = try JSONDecoder().decode(ResumableDownload.self, from: try JSONEncoder().encode(paused.resumable))
            _ = try await NetworkProvider(configuration: .ephemeral).download(resuming: again, to: destination)
            // THEN each call asked for the rest of what the last one kept, and the file is the server's
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.map(\.range) == [nil, "bytes=\(first.bytesReceived)-", "bytes=\(again.bytesReceived)-"])
            #expect(entries.dropFirst().allSatisfy { $0.status == 206 && $0.ifRange == "\"0-v0\"" })
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test func aHundredDownloadsWithRandomDropPointsAllEndByteIdenticalAndTheServerSendsLittleMore() async throws {
        try await withServer { server in
            // GIVEN 100 files of 256 KiB to 2 MiB, each dropping at one to three random points
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            var files: [ResumeFile] = []
            for _ in 0..<100 {
                let size = Int.random(in: (256 << 10)...(2 << 20))
                let drops = (0..<Int.random(in: 1...3)).map { _ in Int.random(in: 1..<size) }.sorted()
                files.append(
                    ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": drops.map(String.init).joined(separator: ",")]))
            }
            let provider = retryingProvider()
            // WHEN they are downloaded, eight at a time
            let started = Date()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, file) in files.enumerated() {
                    if index >= 8 { try await group.next() }
                    group.addTask { _ = try await provider.download(file, to: folder.appendingPathComponent("\(index).bin")) }
                }
                try await group.waitForAll()
            }
            // THEN every file is the server's, byte for byte, and nothing else is left in the folder
            for (index, file) in files.enumerated() {
                let ok = try isServersFile(folder.appendingPathComponent("\(index).bin"), size: file.size)
                #expect(ok, "file \(index): \(file.query)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 100)
            // and the server sent at most 105% of the files' bytes
            let total = files.reduce(0) { $0 + $1.size }
            let sent = await TestServer.resumeLog.bytesSent(files.map(\.key))
            let drops = files.reduce(0) { $0 + ($1.query["drops"] ?? "").split(separator: ",").count }
            #expect(Double(sent) <= Double(total) * 1.05)
            print(
                "resume 100 downloads: \(drops) drops, \(total) bytes in files, server sent \(sent) (\(Double(sent) / Double(total))×) in \(Date().timeIntervalSince(started)) s"
            )
        }
    }
    @Test func aServerThatIgnoresIfRangeAfterTheFileChangedIsNeverSplicedRFC9110_13_1_5() async throws {
        try await withServer { server in
            // GIVEN a 4 MiB file replaced after each answer (a new ETag, other bytes), from a server that serves
            // a range whatever If-Range says; the first answer drops at 1.5 MiB
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 4 << 20
            let file = ResumeFile(
                server: server.baseURL, query: ["size": "\(size)", "drops": "\(3 << 19)", "changes": "1", "range": "ignoresIfRange"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries
            _ = try await retryingProvider().download(file, to: destination)
            // THEN the retry's 206 (the rest of version 1, with its own ETag) was not appended to version 0's bytes:
            // the file was asked for again whole, and is version 2, byte for byte
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.map(\.status) == [200, 206, 200])
            #expect(entries.map { $0.range == nil } == [true, false, true])
            #expect(entries[1].ifRange == "\"0-v0\"")
            #expect(try isServersFile(destination, size: size, version: 2))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test(arguments: ["known", "unknown"])
    func aServerThatSendsLessThanAskedEndsWithTheWholeFileNeverAShortOneRFC9110_14_4(total: String) async throws {
        try await withServer { server in
            // GIVEN a 4 MiB file whose first answer drops at 1 MiB, from a server whose 206s hold at most 1 MiB
            // (`Content-Range: bytes A-B/4194304`, or `/*`)
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 4 << 20
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(1 << 20)", "cap": "\(1 << 20)", "total": total])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries
            _ = try await retryingProvider().download(file, to: destination)
            // THEN each short 206 was kept and the rest asked for from where it ended, until the file's end
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.first?.status == 200)
            #expect(entries.count >= 4)
            #expect(entries.dropFirst().allSatisfy { $0.status == 206 && $0.ifRange == "\"0-v0\"" })
            let starts = entries.dropFirst().compactMap { $0.range.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) } }
            #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 == $0 + (1 << 20) })
            // and the file is the server's, byte for byte
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test func a206WithAnUnknownCompleteLengthNeverCompletesAFileSentChunkedRFC9110_14_4() async throws {
        try await withServer { server in
            // GIVEN a 4 MiB file whose 200 is sent chunked (no length) and drops at 1 MiB, from a server whose
            // 206s hold at most 1 MiB with `Content-Range: bytes A-B/*`: nothing says where the file ends
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 4 << 20
            let file = ResumeFile(
                server: server.baseURL,
                query: ["size": "\(size)", "drops": "\(1 << 20)", "cap": "\(1 << 20)", "total": "unknown", "length": "chunked"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded with retries
            _ = try await retryingProvider().download(file, to: destination)
            // THEN the 206 was refused rather than taken as the file's end, and the file asked for again whole
            let entries = await TestServer.resumeLog.entries(file.key)
            #expect(entries.map(\.status) == [200, 206, 200])
            #expect(entries.map { $0.range == nil } == [true, false, true])
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }

    @Test func aServerThatSendsLessThanAskedWithNoAttemptLeftInterruptsTheCallWithItsBytesKept() async throws {
        try await withServer { server in
            // GIVEN a 4 MiB file whose 206s hold at most 1 MiB with `/*`, and providers that make one attempt a call
            let folder = try makeScratchFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let size = 4 << 20
            let file = ResumeFile(server: server.baseURL, query: ["size": "\(size)", "drops": "\(1 << 20)", "cap": "\(1 << 20)", "total": "unknown"])
            let destination = folder.appendingPathComponent("big.bin")
            // WHEN it is downloaded call after call, each continuing what the last one kept
            var kept: ResumableDownload?
            var outcomes: [Int64] = []
            for _ in 0..<8 {
                do {
                    _ = try await NetworkProvider(configuration: .ephemeral, maximumAttempts: 1).download(file, to: destination, resuming: kept)
                    break
                } catch let interrupted as DownloadInterrupted {
                    // THEN no call succeeds short of the file's end: each is interrupted, keeping what arrived
                    #expect(!FileManager.default.fileExists(atPath: destination.path))
                    outcomes.append(interrupted.resumable.bytesReceived)
                    kept = interrupted.resumable
                }
            }
            #expect(outcomes.count >= 3 && outcomes.count < 8)
            #expect(outcomes.allSatisfy { $0 > 0 && $0 < Int64(size) })
            #expect(zip(outcomes, outcomes.dropFirst()).allSatisfy { $1 == $0 + (1 << 20) })
            // and the last one ends with the whole file, byte for byte
            #expect(try isServersFile(destination, size: size))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["big.bin"])
        }
    }
}
