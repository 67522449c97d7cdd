import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The token of a background transfer: attached when it is created, never changed later, never another
/// account's.
@Suite("Background transfers and authentication", SuiteTimeLimit.oneMinute)
struct BackgroundTransferAuthTests {
    @Test("The token is attached when the transfer is created; the record keeps its account but not the token")
    func tokenAttachedAtCreation() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(201))
        let auth = backgroundAuthenticator(account: "A", token: "token-A1")
        let service = try await app.launch(authenticator: auth)
        var outcomes = service.outcomes.makeAsyncIterator()
        let record = try await service.upload(BackgroundAPI.upload())
        #expect(record.account == "A")
        let stored = try Data(contentsOf: app.recordsFolder.appendingPathComponent("\(record.id.uuidString).record"))
        #expect(String(decoding: stored, as: UTF8.self).contains("token-A1") == false)   // no secret on disk

        try await auth.signIn(with: Credential(accessToken: "token-A2", refreshToken: "r", account: "A"))   // a refresh, later
        await app.system.run(record.id.uuidString)
        _ = try #require(await outcomes.next())
        #expect(app.server.requests.first?.header("Authorization") == "Bearer token-A1")   // as created
    }

    @Test("A 401 on a background upload ends it with a typed error; enqueued again after a refresh, it goes with the new token")
    func unauthorizedUpload() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(401), .status(201))
        let auth = backgroundAuthenticator(account: "A", token: "token-A1")
        let service = try await app.launch(authenticator: auth)
        var outcomes = service.outcomes.makeAsyncIterator()
        let record = try await service.upload(BackgroundAPI.upload(), tag: "video")
        await app.system.run(record.id.uuidString)
        let outcome = try #require(await outcomes.next())
        guard case .unauthorized(401, credentialRefreshedSince: false)? = outcome.error else {
            Issue.record("expected unauthorized, got \(outcome)")
            return
        }

        try await auth.signIn(with: Credential(accessToken: "token-A2", refreshToken: "r", account: "A"))   // the app refreshed
        let again = try await service.upload(BackgroundAPI.upload(), tag: record.tag, account: record.account)
        await app.system.run(again.id.uuidString)
        #expect(try #require(await outcomes.next()).response?.statusCode == 201)
        #expect(app.server.requests.map { $0.header("Authorization") } == ["Bearer token-A1", "Bearer token-A2"])
    }

    @Test("A 401 reports whether the credential of the same account was refreshed since the transfer was created")
    func unauthorizedAfterRefresh() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(401))
        let auth = backgroundAuthenticator(account: "A", token: "token-A1")
        let service = try await app.launch(authenticator: auth)
        var outcomes = service.outcomes.makeAsyncIterator()
        let record = try await service.upload(BackgroundAPI.upload())
        try await auth.signIn(with: Credential(accessToken: "token-A2", refreshToken: "r", account: "A"))
        await app.system.run(record.id.uuidString)
        let outcome = try #require(await outcomes.next())
        guard case .unauthorized(401, credentialRefreshedSince: true)? = outcome.error else {
            Issue.record("expected unauthorized, refreshed since, got \(outcome)")
            return
        }
    }

    @Test("Two accounts: A's transfer is reported as A's after B signed in, and is never sent again with B's token")
    func twoAccounts() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.post, "/v1/videos", .status(401))
        let auth = backgroundAuthenticator(account: "A", token: "token-A1")
        let first = try await app.launch(authenticator: auth)
        let record = try await first.upload(BackgroundAPI.upload(), tag: "A's video")
        await app.terminate(first)
        try await auth.signOut()
        try await auth.signIn(with: Credential(accessToken: "token-B1", refreshToken: "r", account: "B"))
        await app.system.run(record.id.uuidString)

        let second = try await app.launch(authenticator: auth)
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = try #require(await outcomes.next())
        #expect(outcome.record?.account == "A")
        guard case .unauthorized(401, credentialRefreshedSince: false)? = outcome.error else {   // B's token is no refresh of A's
            Issue.record("expected unauthorized, got \(outcome)")
            return
        }
        await #expect(throws: BackgroundTransferError.self) {
            try await second.upload(BackgroundAPI.upload(), tag: record.tag, account: record.account)
        }
        #expect(app.system.waitingTasks.isEmpty)
        #expect(app.server.requests.allSatisfy { $0.header("Authorization") != "Bearer token-B1" })
        #expect(try app.recordFiles() == ["\(record.id.uuidString).record"])   // its outcome, until acknowledged
        await second.acknowledge(outcome)
        #expect(try app.recordFiles().isEmpty)
    }

    @Test(
        "The system follows a redirect to another origin itself (background sessions do); the transfer then fails, its download not landed (RFC 9110 §15.4)"
    )
    func redirectToAnotherOriginFailsTheTransfer() async throws {
        let app = try BackgroundApp()
        defer { app.cleanUp() }
        app.server.stub(.get, "/v1/files/report.pdf", MockResponse(statusCode: 302, headers: ["Location": "https://cdn.example.net/report.pdf"]))
        app.server.stub(.get, "/report.pdf", MockResponse(statusCode: 200, body: Data("pdf".utf8)))
        app.server.stub(.post, "/v1/videos", MockResponse(statusCode: 307, headers: ["Location": "http://api.example.com/v1/videos"]), .status(201))
        let service = try await app.launch(authenticator: backgroundAuthenticator())
        var outcomes = service.outcomes.makeAsyncIterator()
        let destination = app.folder.appendingPathComponent("report.pdf")
        let download = try await service.download(BackgroundAPI.download(), to: destination)
        await app.system.run(download.id.uuidString)
        let downloaded = try #require(await outcomes.next())
        guard case .redirectedToAnotherOrigin(let origin)? = downloaded.error else {
            Issue.record("expected the redirect refused after the fact, got \(downloaded)")
            return
        }
        #expect(origin.description == "https://cdn.example.net:443")
        #expect(!FileManager.default.fileExists(atPath: destination.path))   // a body from another origin is not landed

        let upload = try await service.upload(BackgroundAPI.upload())
        await app.system.run(upload.id.uuidString)
        let uploaded = try #require(await outcomes.next())
        guard case .redirectedToAnotherOrigin(let downgrade)? = uploaded.error else {   // https → http: another origin
            Issue.record("expected the redirect refused after the fact, got \(uploaded)")
            return
        }
        #expect(downgrade.scheme == "http")
    }
}
