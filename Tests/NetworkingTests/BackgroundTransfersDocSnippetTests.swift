// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/BackgroundTransfers.md: keep each identical to the page. The app delegate's
// UIKit lines compile on iOS only; its service part is `launch` below, on the simulated system.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

@Suite("Docs/BackgroundTransfers.md snippets", SuiteTimeLimit.oneMinute)
struct BackgroundTransfersDocSnippetTests {
    @Test func appDelegateStartTransfersAndOutcomes() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/videos", .status(201))
        server.stub(.post, "/v1/me/avatar", .status(201))
        server.stub(.get, "/v1/files/report.pdf", MockResponse(statusCode: 200, headers: ["ETag": "\"v7\""], body: Data("pdf".utf8)))
        let system = SimulatedBackgroundSystem(server: server)
        system.runsTasksAtOnce = true
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let videoURL = folder.appendingPathComponent("video.mp4")
        try Data("video".utf8).write(to: videoURL)
        let reportURL = folder.appendingPathComponent("report.pdf")
        let form = MultipartForm([.text("nickname", "Kim")])
        let video = (id: "v1", title: "holiday")
        let auth = backgroundAuthenticator()
        let provider = server.makeProvider(interceptor: auth)
        let seen = Recorder<String>()
        let library = Library(seen: seen)

        // The service part of didFinishLaunching, on the simulated system.
        let transfers = try BackgroundTransferService(session: system.launch(identifier: "com.example.app.transfers"), folder: folder.appendingPathComponent("transfers"), authenticator: auth)
        let loop = Task {
            for await outcome in transfers.outcomes {   // from launch on
                await library.apply(outcome)
                await transfers.acknowledge(outcome)   // applied: its record may go
            }
        }
        try await transfers.start()

        let record = try await transfers.upload(VideoAPI.upload(videoURL), tag: video.id)                  // a file body
        try await transfers.upload(ProfileAPI.avatar(form), tag: "avatar")                                  // a form: spooled to a file first
        try await transfers.download(FilesAPI.report, to: reportURL, tag: "report", expectedValidator: "\"v7\"")

        while seen.count < 3 { try await Task.sleep(nanoseconds: 1_000_000) }   // the suite's time limit ends a wait that never does
        #expect(Set(seen.all) == ["\(record.tag) 201", "avatar 201", "report 200"])
        #expect(FileManager.default.contents(atPath: reportURL.path) == Data("pdf".utf8))
        loop.cancel()
        _ = provider
    }

    @Test func outcomeLoop() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/videos", .status(401), .status(201))
        server.stub(.get, "/v1/me", .status(200))
        let system = SimulatedBackgroundSystem(server: server)
        system.runsTasksAtOnce = true
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let videoURL = folder.appendingPathComponent("video.mp4")
        try Data("video".utf8).write(to: videoURL)
        let auth = backgroundAuthenticator()
        let provider = server.makeProvider(interceptor: auth)
        let transfers = try BackgroundTransferService(session: system.launch(identifier: "transfers"), folder: folder.appendingPathComponent("transfers"), authenticator: auth)
        try await transfers.start()
        try await transfers.upload(VideoAPI.upload(videoURL), tag: "holiday")
        var statuses: [Int] = []

        for await outcome in transfers.outcomes {
            switch outcome {
            case .finished(let record, let response):
                print("\(record.tag): \(response.statusCode)", response.file ?? "")
                statuses.append(response.statusCode)
            case .failed(let record, .unauthorized(_, let refreshedSince)):
                if !refreshedSince { _ = try await provider.response(ProfileAPI.me) }   // the provider refreshes on its 401
                try await transfers.upload(VideoAPI.upload(videoURL), tag: record.tag, account: record.account)
            case .failed(let record, let error):
                print("\(record.tag) failed: \(error)")
            case .unreadableRecord(let issue):
                print(issue)
            }
            await transfers.acknowledge(outcome)   // applied: told no more
            if await transfers.pendingTransfers.isEmpty { break }
        }
        #expect(statuses == [201])
    }

    @Test func testingWithoutADevice() async throws {
        let server = MockServer()
        server.stub(.post, "/v1/videos", .status(201))
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let videoURL = folder.appendingPathComponent("video.mp4")
        try Data("video".utf8).write(to: videoURL)

        let system = SimulatedBackgroundSystem(server: server)
        let first = try BackgroundTransferService(session: system.launch(identifier: "transfers"), folder: folder)
        try await first.start()
        let record = try await first.upload(VideoAPI.upload(videoURL), tag: "holiday")
        system.terminateApp()                 // the app is gone; its task goes on
        await first.stop()
        await system.runAll()                 // the task ends while the app is gone

        let second = try BackgroundTransferService(session: system.launch(identifier: "transfers"), folder: folder)
        try await second.start()              // the next launch
        var outcomes = second.outcomes.makeAsyncIterator()
        let outcome = await outcomes.next()   // .finished(record, response)

        #expect(outcome?.record?.id == record.id)
        #expect(outcome?.response?.statusCode == 201)
    }
}

/// The app's model in the snippets: records what each outcome said.
private struct Library {
    let seen: Recorder<String>

    func apply(_ outcome: BackgroundTransferOutcome) async {
        switch outcome {
        case .finished(let record, let response): seen.append("\(record.tag) \(response.statusCode)")
        case .failed(let record, let error): seen.append("\(record.tag) \(error)")
        case .unreadableRecord(let issue): seen.append(issue.description)
        }
    }
}

/// The endpoints of the snippets, nested so that they do not clash with other tests' names.
extension BackgroundTransfersDocSnippetTests {
    enum VideoAPI: Endpoint {
        case upload(URL)
        var baseURL: URL { URL(string: "https://api.example.com/v1")! }
        var path: String { "/videos" }
        var method: HTTPMethod { .post }
        var body: RequestBody {
            guard case .upload(let file) = self else { return .none }
            return .file(file, contentType: "video/mp4")
        }
    }

    enum ProfileAPI: Endpoint {
        case avatar(MultipartForm)
        case me
        var baseURL: URL { URL(string: "https://api.example.com/v1")! }
        var path: String {
            if case .me = self { return "/me" }
            return "/me/avatar"
        }
        var method: HTTPMethod {
            if case .me = self { return .get }
            return .post
        }
        var body: RequestBody {
            guard case .avatar(let form) = self else { return .none }
            return .multipart(form)
        }
    }

    enum FilesAPI: Endpoint {
        case report
        var baseURL: URL { URL(string: "https://api.example.com/v1")! }
        var path: String { "/files/report.pdf" }
    }
}
