// A driver for instruction and allocation counts (valgrind's callgrind and dhat), run by
// `Benchmarks/compare.sh`: `probe <mode> <requests> [port]`.
//
// Modes send the same GET + JSON decode either with raw `URLSession.data(for:)` + `JSONDecoder` (building
// the URL from the base URL and path, as an app would) or through `NetworkProvider`:
//   raw-sequential, provider-sequential     one after another, through the mock URLProtocol
//   raw-concurrent, provider-concurrent     batches of 64 concurrent tasks, through the mock (the provider's with
//                                           coalescing off, so that each of its calls is an exchange as each raw one is)
//   raw-tcp, provider-tcp                   one after another, to a loopback server on <port>
//   provider-plain                          provider-sequential with no interceptor at all (the mock's routing
//                                           header comes from the configuration): an app's provider, for the
//                                           own-instructions and own-allocations lines
//   provider-nodeadline                     provider-sequential with no deadline (what the deadline timer costs)
//   provider-cache-hit                      provider-sequential with a MemoryResponseCache: the response (with
//                                           `Cache-Control: max-age=3600`) is stored by one request before the
//                                           loop, so every counted request is a fresh hit, decode included
//   floor-sequential                        the transport's floor under the provider: raw code driving a
//                                           `dataTask(with:)` from a session delegate (response, data and
//                                           completion callbacks on a serial delegate queue, as the provider's),
//                                           the body gathered in `didReceive data`, 2xx checked, decoded;
//                                           the request built per call as raw-sequential builds it, no URLCache
//   storm-expired, storm-valid              storms of 1,000 concurrent calls (<requests> a multiple of 1,000),
//                                           each through a fresh MockAuthServer and provider with an
//                                           AuthInterceptor: the token expired (unknown expiry: 401s, one
//                                           shared refresh, resends) or valid; fails unless every expired
//                                           storm refreshed exactly once and every valid one never. The
//                                           provider is an app's: the interceptor its own, the mock's routing
//                                           header from the configuration (as provider-plain's); with
//                                           PROBE_UNLIMITED set, its Scheduling has no effective limit (to
//                                           tell the queue's cost from the rest)
//   floor-storm-expired, floor-storm-valid  the same storms with no provider: raw code on the floor's transport
//                                           with the leanest correct single-flight refresh (RawTokens)
//   outbox-memory                           <requests> mutations queued in an Outbox: peak RSS growth (OutboxMemory.swift)
//   provider-coalesced, in-flight-*         issue 33's scheduling lines: see SchedulingModes.swift
//   outbox-replay-time                      <requests> rounds of 1,000 deliveries through an Outbox against 1,000 direct
//                                           sends (and the same sends read by another task), wall clock, medians
//                                           (OutboxReplay.swift; also outbox-replay,
//                                           outbox-replay-open, outbox-direct, outbox-replay-template, *-rounds)
// compare.sh runs each mode twice (with N and 3N requests) and takes the difference, so that start-up
// cancels out. `main` is synchronous and waits on a detached task: callgrind crashes on an async main here.
import Dispatch
import Foundation
import Networking
import NetworkingTestSupport
import SharedFixtures

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct UserEndpoint: Endpoint {
    let baseURL: URL
    var path: String { "/users/1" }
}

/// `UserEndpoint` with coalescing off: provider-concurrent's 64 identical calls at once each make their own
/// exchange, as raw-concurrent's do (with coalescing they would share one, and the line would compare one
/// exchange per batch with 64).
struct UncoalescedUserEndpoint: Endpoint {
    let baseURL: URL
    var path: String { "/users/1" }
    var coalescesIdenticalCalls: Bool? { false }
}

enum Failure: Error {
    case status(Int)
    /// The server saw this many requests where the cache mode expects only the one before the loop.
    case notHits(Int)
    /// A storm refreshed this many times (expected: once with an expired token, never with a valid one).
    case refreshes(Int)
}

/// What an app writing raw URLSession code does: join the URL, send, check 2xx, decode.
struct RawClient: Sendable {
    let session: URLSession
    let baseURL: URL
    let route: @Sendable (URLRequest) -> URLRequest
    let decoder = JSONDecoder()

    func user() async throws -> User {
        let request = route(URLRequest(url: baseURL.appendingPathComponent("users/1")))
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else { throw Failure.status(-1) }
        return try decoder.decode(User.self, from: data)
    }
}

/// Raw code that needs the body as it arrives (as a size limit does), at its leanest: a session delegate gets
/// the response, the data and the completion of a `dataTask(with:)`; the body is gathered per task, then 2xx
/// checked and decoded, the request built per call as the raw client builds it: this is the transport's floor
/// under the provider (raw code whose only change is the transport bounded memory needs), with nothing of a
/// pipeline around it.
final class FloorDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `tasks` is guarded by `lock`; a Pending's `body` is touched only by its task's serial callbacks.
    private final class Pending {
        var body = Data()
        let continuation: CheckedContinuation<(Data, URLResponse?), any Error>
        init(_ continuation: CheckedContinuation<(Data, URLResponse?), any Error>) { self.continuation = continuation }
    }
    private let lock = NSLock()
    private var tasks: [Int: Pending] = [:]

    func start(_ task: URLSessionTask, continuation: CheckedContinuation<(Data, URLResponse?), any Error>) {
        lock.lock()
        tasks[task.taskIdentifier] = Pending(continuation)
        lock.unlock()
        task.resume()
    }

    private func pending(_ task: URLSessionTask) -> Pending? {
        lock.lock()
        defer { lock.unlock() }
        return tasks[task.taskIdentifier]
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        pending(dataTask)?.body.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock()
        let pending = tasks.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        guard let pending else { return }
        if let error { pending.continuation.resume(throwing: error) } else { pending.continuation.resume(returning: (pending.body, task.response)) }
    }
}

struct FloorClient: Sendable {
    let session: URLSession
    let delegate: FloorDelegate
    let baseURL: URL
    let route: @Sendable (URLRequest) -> URLRequest
    /// The delegate queue's dispatch queue, which the operation queue does not keep.
    let callbackQueue = DispatchQueue(label: "probe.floor", qos: .userInitiated)
    let decoder = JSONDecoder()

    /// The raw client's request building (the URL joined and the mock's routing header set per call) and the
    /// provider's session configuration (no URLCache); only the transport differs from the raw client's.
    init(configuration: URLSessionConfiguration, baseURL: URL, route: @escaping @Sendable (URLRequest) -> URLRequest) {
        configuration.urlCache = nil   // as the provider's session: no URLCache consulted per task
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let delegate = FloorDelegate()
        let queue = OperationQueue()   // serial, at a high QoS: as the provider's delegate queue
        queue.maxConcurrentOperationCount = 1
        queue.underlyingQueue = callbackQueue
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        self.delegate = delegate
        self.baseURL = baseURL
        self.route = route
    }

    func user() async throws -> User {
        let (data, response) = try await send(route(URLRequest(url: baseURL.appendingPathComponent("users/1"))))
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else { throw Failure.status(-1) }
        return try decoder.decode(User.self, from: data)
    }

    /// One delegate-driven task: its body and response.
    func send(_ request: URLRequest) async throws -> (Data, URLResponse?) {
        let (session, delegate) = (session, delegate)
        return try await withCheckedThrowingContinuation { continuation in
            delegate.start(session.dataTask(with: request), continuation: continuation)
        }
    }
}

/// The storm's floor: raw code on the floor's transport with the leanest single-flight refresh that is still
/// correct: a call sends with the current token; on a 401 it waits for the one refresh that the first 401 for
/// that token started (or takes a newer token at once) and sends again, once.
actor RawTokens {
    private var token = MockAuthServer.initialCredential.accessToken
    private var refreshing: Task<String, any Error>?

    func current() async throws -> String {
        if let refreshing { return try await refreshing.value }
        return token
    }

    func replacing(_ failed: String, refresh: @escaping @Sendable () async throws -> String) async throws -> String {
        if let refreshing { return try await refreshing.value }
        if failed != token { return token }
        let task = Task { try await refresh() }
        refreshing = task
        let renewed = try await task.value
        token = renewed
        refreshing = nil
        return renewed
    }
}

struct RawStormClient: Sendable {
    let floor: FloorClient
    let api: MockAuthServer
    let tokens = RawTokens()
    let decoder = JSONDecoder()

    func resource(_ path: String) async throws -> MockAuthServer.Resource {
        var token = try await tokens.current()
        for attempt in 1...2 {
            var request = floor.route(URLRequest(url: api.baseURL.appendingPathComponent(path)))
            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            let (data, response) = try await floor.send(request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if status == 401, attempt == 1 {
                token = try await tokens.replacing(token) { try await refresh() }
                continue
            }
            guard (200..<300).contains(status) else { throw Failure.status(status) }
            return try decoder.decode(MockAuthServer.Resource.self, from: data)
        }
        throw Failure.status(401)
    }

    private func refresh() async throws -> String {
        var request = floor.route(URLRequest(url: api.baseURL.appendingPathComponent("auth/refresh")))
        request.httpMethod = "POST"
        request.httpBody = try JSONEncoder().encode(MockAuthServer.RefreshRequest(refreshToken: MockAuthServer.initialCredential.refreshToken))
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (data, response) = try await floor.send(request)
        guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else { throw Failure.status(-1) }
        return try decoder.decode(MockAuthServer.Tokens.self, from: data).accessToken
    }
}

/// Calls per storm in the storm modes.
let stormSize = 1_000

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: probe <mode> <requests> [port]\n".utf8))
    exit(2)
}
let mode = arguments[1]
if mode == "outbox-memory" { runOutboxMemory(count: count) }   // natively, not under valgrind (OutboxMemory.swift)
if mode.hasPrefix("outbox-replay") || mode.hasPrefix("outbox-direct") { runOutboxReplay(mode: mode, count: count) }   // OutboxReplay.swift
let port = arguments.count > 3 ? arguments[3] : "0"
let server = MockServer()
// Only the cache mode's response is cacheable: the other modes' stay as they were measured.
let cacheHeaders = mode == "provider-cache-hit" ? ["Cache-Control": "max-age=3600"] : [:]
server.stub(.get, "/v1/users/1", .json(User.sample, headers: cacheHeaders))
let mockBase = URL(string: "https://api.example.com/v1")!
let tcpBase = URL(string: "http://127.0.0.1:\(port)/v1")!

let send: @Sendable () async throws -> User
/// Runs once before the counted requests (in both runs of a mode, so the difference drops it too).
var prepare: @Sendable () async throws -> Void = {}
/// Checks what the server saw after the counted requests.
var check: @Sendable () throws -> Void = {}
switch mode {
case "raw-sequential", "raw-concurrent":
    let client = RawClient(session: URLSession(configuration: server.makeConfiguration()), baseURL: mockBase, route: { server.route($0) })
    send = { try await client.user() }
case "provider-sequential", "provider-nodeadline":
    let provider = server.makeProvider(deadline: mode == "provider-nodeadline" ? .infinity : NetworkProvider.defaultDeadline)
    send = { try await provider.request(UserEndpoint(baseURL: mockBase), as: User.self) }
case "provider-concurrent":
    let provider = server.makeProvider()
    send = { try await provider.request(UncoalescedUserEndpoint(baseURL: mockBase), as: User.self) }
case "provider-plain":
    // The routing header from the configuration (the provider moves it onto every request it builds), so the
    // provider has no interceptor at all, as in an app that sets none: what own-instructions compares.
    let configuration = server.makeConfiguration()
    configuration.httpAdditionalHeaders = [MockURLProtocol.serverHeader: server.id]
    let provider = NetworkProvider(configuration: configuration)
    send = { try await provider.request(UserEndpoint(baseURL: mockBase), as: User.self) }
case "provider-cache-hit":
    let provider = server.makeProvider(cache: MemoryResponseCache())
    let endpoint = UserEndpoint(baseURL: mockBase)
    prepare = { _ = try await provider.request(endpoint, as: User.self) }   // the one miss: stores the response
    send = { try await provider.request(endpoint, as: User.self) }
    check = { if server.requests.count != 1 { throw Failure.notHits(server.requests.count) } }
case "floor-sequential":
    let client = FloorClient(configuration: server.makeConfiguration(), baseURL: mockBase, route: { server.route($0) })
    send = { try await client.user() }
case "storm-expired", "storm-valid", "floor-storm-expired", "floor-storm-valid", "provider-coalesced", "in-flight-concurrent",
    "in-flight-sequential", "in-flight-memory", "in-flight-memory-unlimited":
    send = { throw Failure.status(0) }   // unused: a storm runs its own calls (below)
case "raw-tcp":
    let client = RawClient(session: URLSession(configuration: .ephemeral), baseURL: tcpBase, route: { $0 })
    send = { try await client.user() }
case "provider-tcp":
    let provider = NetworkProvider(configuration: .ephemeral)
    send = { try await provider.request(UserEndpoint(baseURL: tcpBase), as: User.self) }
default:
    FileHandle.standardError.write(Data("probe: unknown mode \(mode)\n".utf8))
    exit(2)
}

let finished = DispatchSemaphore(value: 0)
nonisolated(unsafe) var failure: (any Error)?
Task.detached { [prepare, check] in
    do {
        try await prepare()
        if try await runSchedulingMode(mode, count: count) {
            // its own calls and checks (SchedulingModes.swift)
        } else if mode.hasPrefix("storm-") || mode.hasPrefix("floor-storm-") {
            let valid = mode.hasSuffix("-valid")
            for _ in 0..<(count / stormSize) {
                let api = MockAuthServer(accessTokenIsValid: valid)
                if mode.hasPrefix("floor-") {
                    let floor = FloorClient(configuration: api.mock.makeConfiguration(), baseURL: api.baseURL, route: { api.mock.route($0) })
                    let client = RawStormClient(floor: floor, api: api)
                    let paths = (0..<stormSize).map { "items/\($0)" }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for path in paths {
                            group.addTask { _ = try await client.resource(path) }
                        }
                        try await group.waitForAll()
                    }
                } else {
                    // As an app has it: the interceptor is the provider's own, and the mock's routing header comes from
                    // the configuration (as provider-plain's), not from a routing adapter that no app has.
                    let configuration = api.mock.makeConfiguration()
                    configuration.httpAdditionalHeaders = [MockURLProtocol.serverHeader: api.mock.id]
                    let auth = api.makeInterceptor(store: InMemoryCredentialStore(MockAuthServer.initialCredential))
                    let unlimited = Scheduling(maximumCalls: 1 << 30, maximumCallsPerHost: 1 << 30)
                    let scheduling = ProcessInfo.processInfo.environment["PROBE_UNLIMITED"] != nil ? unlimited : .default
                    let provider = NetworkProvider(scheduling: scheduling, configuration: configuration, interceptor: auth)
                    let endpoints = (0..<stormSize).map { api.resource("/items/\($0)") }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for endpoint in endpoints {
                            group.addTask { _ = try await provider.request(endpoint, as: MockAuthServer.Resource.self) }
                        }
                        try await group.waitForAll()
                    }
                }
                if api.refreshCount != (valid ? 0 : 1) { throw Failure.refreshes(api.refreshCount) }
                if ProcessInfo.processInfo.environment["PROBE_VERBOSE"] != nil {
                    FileHandle.standardError.write(Data("storm: \(api.expiredResponseCount) 401s, \(api.refreshCount) refreshes\n".utf8))
                }
            }
        } else if mode.hasSuffix("concurrent") {
            for _ in 0..<(count / 64) {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<64 { group.addTask { try await send().id } }
                    for try await id in group where id != 1 { throw Failure.status(id) }
                }
            }
        } else {
            for _ in 0..<count where try await send().id != 1 { throw Failure.status(0) }
        }
        try check()
    } catch {
        failure = error
    }
    finished.signal()
}
finished.wait()
if let failure {
    FileHandle.standardError.write(Data("probe: \(failure)\n".utf8))
    exit(1)
}
