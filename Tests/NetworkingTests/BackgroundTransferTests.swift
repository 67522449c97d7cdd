import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Background transfers while the app runs: cancellation, many at once, bodies, downloads, damaged records.
@Suite("Background transfers", SuiteTimeLimit.threeMinutes)
struct BackgroundTransferTests {
    @Test("Cancelling a transfer from the app ends it as cancelled; nothing is sent and its files are removed")
    func cancellation() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        let service = try await app.launch()
        var outcomes = service.outcomes.makeAsyncIterator()
        let record = try await service.upload(BackgroundAPI.upload())
        await service.cancel(record.id)
        let outcome = try #require(await outcomes.next())
        guard case .cancelled? = outcome.error else {
            Issue.record("expected cancelled, got \(outcome)")
            return
        }
        #expect(app.server.requests.isEmpty)
        #expect(app.system.waitingTasks.isEmpty)
        await service.acknowledge(outcome)
        #expect(try app.recordFiles().isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.folder.appendingPathComponent("bodies").path).isEmpty)
    }

    @Test("200 concurrent background transfers each end once, with their own outcome")
    func manyConcurrentTransfers() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(handler: { request in MockResponse(statusCode: 201, body: request.body) })   // echoes each body
        app.system.runsTasksAtOnce = true
        let service = try await app.launch()
        var outcomes = service.outcomes.makeAsyncIterator()
        let records = try await withThrowingTaskGroup(of: BackgroundTransferRecord.self) { group in
            for index in 0..<200 {
                group.addTask { try await service.upload(BackgroundAPI.upload("body \(index)"), tag: "\(index)") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let ended = await nextOutcomes(200, of: &outcomes)
        #expect(ended.count == 200)
        #expect(Set(ended.compactMap { $0.record?.id }) == Set(records.map(\.id)))
        for outcome in ended {
            #expect(outcome.response?.body == Data("body \(outcome.record?.tag ?? "?")".utf8))
        }
        #expect(app.server.requests.count == 200)
        #expect(await service.pendingTransfers.isEmpty)
        for outcome in ended { await service.acknowledge(outcome) }
        #expect(try app.recordFiles().isEmpty)
    }

    @Test("A corrupted and a torn record are skipped and reported; the other transfers are delivered")
    func corruptedRecords() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let first = try await app.launch()
        let good = try await first.upload(BackgroundAPI.upload(), tag: "good")
        let corrupted = try await first.upload(BackgroundAPI.upload(), tag: "corrupted")
        let torn = try await first.upload(BackgroundAPI.upload(), tag: "torn")
        await app.terminate(first)
        await app.system.runAll()
        let corruptedFile = app.recordsFolder.appendingPathComponent("\(corrupted.id.uuidString).record")
        var bytes = try Data(contentsOf: corruptedFile)
        bytes[bytes.count - 5] ^= 0x20   // one flipped bit in the payload
        try bytes.write(to: corruptedFile)
        let tornFile = app.recordsFolder.appendingPathComponent("\(torn.id.uuidString).record")
        let tornSize = try Data(contentsOf: tornFile).count
        try Data(try Data(contentsOf: tornFile).prefix(40)).write(to: tornFile)

        let second = try await app.launch()
        var outcomes = second.outcomes.makeAsyncIterator()
        let ended = await nextOutcomes(3, of: &outcomes)
        let issues = ended.compactMap { outcome -> BackgroundTransferStoreIssue? in
            if case .unreadableRecord(let issue) = outcome { return issue }
            return nil
        }
        #expect(Set(issues.map(\.name)) == ["\(corrupted.id.uuidString).record", "\(torn.id.uuidString).record"])
        #expect(issues.map(\.reason).sorted() == ["checksum mismatch", "truncated: 40 of \(tornSize) bytes"].sorted())
        #expect(ended.compactMap { $0.record?.id } == [good.id])
        #expect(ended.last?.response?.statusCode == 201)
        for outcome in ended { await second.acknowledge(outcome) }
        #expect(Set(try app.recordFiles()) == ["\(corrupted.id.uuidString).record.unreadable", "\(torn.id.uuidString).record.unreadable"])

        await app.terminate(second)
        let third = try await app.launch()   // set aside: reported once
        #expect(await third.pendingTransfers.isEmpty)
    }

    @Test("A download is validated (status, size limit, validator) and lands atomically; a refused one leaves the destination as it was")
    func downloadValidation() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.get, "/v1/files/v2", MockResponse(statusCode: 200, headers: ["ETag": "\"v2\""], body: Data("version 2".utf8)))
        app.server.stub(.get, "/v1/files/missing", .status(404))
        let service = try await app.launch()
        var outcomes = service.outcomes.makeAsyncIterator()
        let destination = app.folder.appendingPathComponent("file.txt")
        try Data("version 1".utf8).write(to: destination)

        func download(_ endpoint: BackgroundAPI, validator: String? = nil) async throws -> BackgroundTransferOutcome {
            let record = try await service.download(endpoint, to: destination, expectedValidator: validator)
            await app.system.run(record.id.uuidString)
            return try #require(await outcomes.next())
        }
        let mismatch = try await download(BackgroundAPI.download("/v1/files/v2"), validator: "\"v3\"")
        guard case .validatorMismatch(expected: "\"v3\"", received: "\"v2\"")? = mismatch.error else {
            Issue.record("expected a validator mismatch, got \(mismatch)")
            return
        }
        let tooLarge = try await download(BackgroundAPI.download("/v1/files/v2", maximumSize: 4))
        guard case .network(.responseTooLarge(limit: 4))? = tooLarge.error else {
            Issue.record("expected too large, got \(tooLarge)")
            return
        }
        let missing = try await download(BackgroundAPI.download("/v1/files/missing"))
        guard case .network(.invalidStatusCode(404))? = missing.error else {
            Issue.record("expected 404, got \(missing)")
            return
        }
        #expect(FileManager.default.contents(atPath: destination.path) == Data("version 1".utf8))

        let landed = try await download(BackgroundAPI.download("/v1/files/v2"), validator: "\"v2\"")
        #expect(landed.response?.file == destination)
        #expect(FileManager.default.contents(atPath: destination.path) == Data("version 2".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.folder.path).sorted() == [".lock", "bodies", "file.txt", "records", "staging"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.folder.appendingPathComponent("staging").path).isEmpty)
    }

    @Test("A multipart form is spooled to a file, sent from it, and the file removed; a signed URL's signature stays off the disk")
    func multipartAndSignedURL() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let photo = app.folder.appendingPathComponent("photo.jpg")
        try Data("jpeg bytes".utf8).write(to: photo)
        let service = try await app.launch()
        var outcomes = service.outcomes.makeAsyncIterator()
        var endpoint = BackgroundAPI(path: "/v1/videos", body: .multipart(MultipartForm([.text("title", "Trip"), .file("photo", at: photo)])))
        endpoint.queryItems = [URLQueryItem(name: "X-Amz-Signature", value: "s3cr3t-signature")]
        let record = try await service.upload(endpoint)
        let stored = try Data(contentsOf: app.recordsFolder.appendingPathComponent("\(record.id.uuidString).record"))
        #expect(String(decoding: stored, as: UTF8.self).contains("s3cr3t-signature") == false)
        #expect(record.endpoint.contains("s3cr3t-signature") == false)

        await app.system.run(record.id.uuidString)
        #expect(try #require(await outcomes.next()).response?.statusCode == 201)
        let sent = try #require(app.server.requests.first)
        #expect(sent.header("Content-Type")?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(String(decoding: sent.body, as: UTF8.self).contains("jpeg bytes"))
        #expect(sent.query("X-Amz-Signature") == "s3cr3t-signature")   // sent as built
        #expect(try FileManager.default.contentsOfDirectory(atPath: app.folder.appendingPathComponent("bodies").path).isEmpty)
    }
}
