// A driver for instruction and allocation counts (valgrind's callgrind and dhat), run by
// `Benchmarks/compare.sh`: `probe <mode> <requests> [port]`.
//
// Modes send the same GET + JSON decode either with raw `URLSession.data(for:)` + `JSONDecoder` (building
// the URL from the base URL and path, as an app would) or through `NetworkProvider`:
//   raw-sequential, provider-sequential     one after another, through the mock URLProtocol
//   raw-concurrent, provider-concurrent     batches of 64 concurrent tasks, through the mock
//   raw-tcp, provider-tcp                   one after another, to a loopback server on <port>
//   provider-nodeadline                     provider-sequential with no deadline (what the deadline timer costs)
//   provider-cache-hit                      provider-sequential with a MemoryResponseCache: the response (with
//                                           `Cache-Control: max-age=3600`) is stored by one request before the
//                                           loop, so every counted request is a fresh hit, decode included
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

enum Failure: Error {
    case status(Int)
    /// The server saw this many requests where the cache mode expects only the one before the loop.
    case notHits(Int)
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

let arguments = CommandLine.arguments
guard arguments.count >= 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: probe <mode> <requests> [port]\n".utf8))
    exit(2)
}
let mode = arguments[1]
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
case "provider-sequential", "provider-concurrent", "provider-nodeadline":
    let provider = server.makeProvider(deadline: mode == "provider-nodeadline" ? .infinity : NetworkProvider.defaultDeadline)
    send = { try await provider.request(UserEndpoint(baseURL: mockBase), as: User.self) }
case "provider-cache-hit":
    let provider = server.makeProvider(cache: MemoryResponseCache())
    let endpoint = UserEndpoint(baseURL: mockBase)
    prepare = { _ = try await provider.request(endpoint, as: User.self) }   // the one miss: stores the response
    send = { try await provider.request(endpoint, as: User.self) }
    check = { if server.requests.count != 1 { throw Failure.notHits(server.requests.count) } }
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
        if mode.hasSuffix("concurrent") {
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
