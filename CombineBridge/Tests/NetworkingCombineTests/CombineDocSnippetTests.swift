// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Combine.md: keep each identical to the page.
import Foundation
import Networking
import NetworkingCombine
import NetworkingTestSupport
import Testing

#if canImport(Combine)
import Combine
#else
import OpenCombine
import OpenCombineDispatch

extension Publisher {
    /// Combine's spelling of `receive(on: DispatchQueue.main)`, for OpenCombine (whose scheduler is `queue.ocombine`).
    func receive(on queue: DispatchQueue) -> Publishers.ReceiveOn<Self, DispatchQueue.OCombine> {
        receive(on: queue.ocombine)
    }
}
#endif

// The endpoints the snippets name.
enum UserAPI: Endpoint {
    case user(id: Int)
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { if case .user(let id) = self { return "/users/\(id)" }; return "/" }
}

enum ReportAPI: Endpoint {
    case latest
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/reports/latest.pdf" }
}

struct MapPack: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/maps/pack.bin" }
    var timeout: TimeInterval? { 60 }
}

enum ChatAPI: Endpoint {
    case reply(to: String)
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/chat/reply" }
}

// MARK: Requests and responses

final class UserModel {
    private(set) var user: User?
    private var cancellables = Set<AnyCancellable>()

    func load(with provider: any NetworkProviding) {
        provider.requestPublisher(UserAPI.user(id: 1), as: User.self)
            .receive(on: DispatchQueue.main)
            .sink(receiveCompletion: { completion in
                if case .failure(let error) = completion { print("failed: \(error)") }
            }, receiveValue: { [weak self] user in self?.user = user })
            .store(in: &cancellables)
    }
}

// MARK: Cached, then fresh

func showUser(_ provider: any NetworkProviding, show: @escaping (User, Bool) -> Void) -> AnyCancellable {
    provider.cachedThenFreshPublisher(UserAPI.user(id: 1), as: User.self)
        .receive(on: DispatchQueue.main)
        .sink(receiveCompletion: { _ in }, receiveValue: { update in
            show(update.value, update.isStale)       // stored (stale: past its freshness), then the server's
        })
}

// MARK: Uploads and downloads, with progress

func downloadReport(_ provider: any NetworkProviding, to destination: URL) -> AnyCancellable {
    provider.downloadPublisher(ReportAPI.latest, to: destination)
        .receive(on: DispatchQueue.main)
        .sink(receiveCompletion: { completion in
            if case .failure(let error) = completion { print("failed: \(error)") }
        }, receiveValue: { event in
            switch event {
            case .progress(let progress): print("\(Int((progress.fraction ?? 0) * 100)) %")
            case .completed(let response): print("done: \(response.statusCode)")
            }
        })
}

// MARK: Resumable downloads

func startDownload(
    _ provider: any NetworkProviding, to destination: URL, resuming saved: ResumableDownload?,
    keep: @escaping @Sendable (ResumableDownload?) -> Void
) -> AnyCancellable {
    provider.downloadPublisher(MapPack(), to: destination, resuming: saved, onCancel: { kept in keep(kept) })
        .sink(receiveCompletion: { completion in
            switch completion {
            case .finished: keep(nil)                                       // whole: nothing to keep
            case .failure(let interrupted as DownloadInterrupted): keep(interrupted.resumable)
            case .failure: keep(nil)                                        // nothing was kept
            }
        }, receiveValue: { _ in })
}

// MARK: Streams

func printReply(_ provider: any NetworkProviding, to question: String) -> AnyCancellable {
    provider.eventsPublisher(ChatAPI.reply(to: question))
        .filter { $0.event == "token" }
        .map(\.data)
        .sink(receiveCompletion: { _ in print() }, receiveValue: { token in print(token, terminator: "") })
}

// MARK: Auth events

func watchSession(_ auth: AuthInterceptor, showSignIn: @escaping () -> Void) -> AnyCancellable {
    auth.eventsPublisher()
        .receive(on: DispatchQueue.main)
        .sink { event in
            if case .sessionExpired = event { showSignIn() }
        }
}

// MARK: The twins, run

@Suite("Combine.md snippets", SuiteTimeLimit.oneMinute)
struct CombineDocSnippetTests {
    @Test func theUserModelLoadsTheUserOnTheMainQueue() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        nonisolated(unsafe) let model = UserModel()   // read on the main queue only, where its sink writes it
        model.load(with: server.makeProvider())
        _ = try await server.nextRequest(matching: .get, "/v1/users/1")
        // the value hops to the main queue: read it there, once it has had time to land
        while await onMain({ model.user }) == nil { try await Task.sleep(nanoseconds: 1_000_000) }   // a poll for what the snippet does not report
        #expect(await onMain({ model.user }) == User(id: 1, name: "Kim"))
    }

    @Test func showUserShowsTheStoredUserThenTheServers() async throws {
        let server = MockServer()
        let resource = MockResource.json(User(id: 1, name: "Kim"), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/users/1", resource: resource)
        let provider = server.makeProvider(cache: MemoryResponseCache())
        _ = try await provider.request(UserAPI.user(id: 1), as: User.self)
        resource.update(body: MockResponse.json(User(id: 1, name: "Kim Lee")).body, etag: "\"v2\"")
        let shown = Mailbox<[String]>()
        let names = Names()
        let subscription = showUser(provider) { user, _ in
            names.append(user.name)
            if names.count == 2 { shown.put(names.all) }
        }
        #expect(await shown.take() == ["Kim", "Kim Lee"])
        subscription.cancel()
    }

    @Test func downloadReportWritesTheFile() async throws {
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        server.stub(.get, "/v1/reports/latest.pdf", MockResponse(body: fileBody(1_000)))
        let destination = folder.appendingPathComponent("report.pdf")
        let subscription = downloadReport(server.makeProvider(), to: destination)
        _ = try await server.nextRequest(matching: .get, "/v1/reports/latest.pdf")
        while (try? Data(contentsOf: destination)) != fileBody(1_000) { try await Task.sleep(nanoseconds: 1_000_000) }   // a poll for what the snippet does not report
        subscription.cancel()
    }

    @Test func startDownloadKeepsWhatContinuesAnInterruptedDownloadAndThatFinishesIt() async throws {
        // (Pausing by cancel hands the same value to `keep` through onCancel: ResumablePublisherTests.)
        let folder = try makeScratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = MockServer()
        let file = MockResource(body: fileBody(10_000), etag: "\"v1\"")
        let dropped = Flag()
        server.stub(.get, "/v1/maps/pack.bin") { request in
            defer { dropped.set() }
            return dropped.isSet ? file.response(to: request) : file.response(to: request).closingAfter(bytes: 4_000)
        }
        let provider = server.makeProvider()
        let destination = folder.appendingPathComponent("pack.bin")
        let kept = Mailbox<ResumableDownload?>()
        let download = startDownload(provider, to: destination, resuming: nil) { kept.put($0) }
        let saved = try #require(await kept.take() ?? nil)
        #expect(saved.bytesReceived == 4_000)
        let finished = Mailbox<ResumableDownload?>()
        let resumed = startDownload(provider, to: destination, resuming: saved) { finished.put($0) }
        #expect(await finished.take() == .some(nil))
        #expect(server.requests.last?.header("Range") == "bytes=4000-")
        #expect(try Data(contentsOf: destination) == fileBody(10_000))
        download.cancel()
        resumed.cancel()
    }

    @Test func printReplyReadsTheTokens() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/chat/reply", .chunked(["event: token\ndata: hi\n\n"], headers: ["Content-Type": "text/event-stream"]))
        let subscription = printReply(server.makeProvider(), to: "hello?")
        _ = try await server.nextRequest(matching: .get, "/v1/chat/reply")
        subscription.cancel()
    }

    @Test func watchSessionShowsTheSignInWhenTheSessionExpires() async throws {
        let server = MockAuthServer()
        server.setRefreshAnswer(.reject)
        let (provider, auth) = server.makeAuthenticatedProvider(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
        let signIn = Flag()
        let subscription = watchSession(auth) { signIn.set() }
        await #expect(throws: NetworkError.self) {
            _ = try await provider.request(server.resource("/items/1"), as: MockAuthServer.Resource.self)
        }
        await signIn.wait()
        subscription.cancel()
    }
}

/// Runs `read` on the main queue and returns what it read.
private func onMain<Value: Sendable>(_ read: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume(returning: read()) } }
}

/// The names `showUser` showed, in order.
private final class Names: @unchecked Sendable {
    // @unchecked: `names` is guarded by `lock`.
    private let lock = NSLock()
    private var names: [String] = []
    func append(_ name: String) { lock.lock(); names.append(name); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return names }
    var count: Int { all.count }
}
