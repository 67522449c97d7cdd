import Foundation
import Networking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs `body` against `hostile_server.py` (a Python asyncio server on 127.0.0.1), stopped afterwards.
func withHostileServer<T>(_ body: (URL) async throws -> T) async throws -> T {
    let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("hostile_server.py")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    defer {
        try? input.fileHandleForWriting.close()   // the server exits when its stdin closes
        process.terminate()
        process.waitUntilExit()
    }
    var line = Data()
    while line.last != UInt8(ascii: "\n") {
        let byte = output.fileHandleForReading.readData(ofLength: 1)
        guard !byte.isEmpty else { throw URLError(.cannotConnectToHost) }
        line += byte
    }
    let port = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return try await body(URL(string: "http://127.0.0.1:\(port)")!)
}

/// A server that misbehaves on purpose: every call ends with a value or a typed `NetworkError`,
/// within the call's deadline, and nothing crashes or hangs. Serialized: corelibs parses 100,000 header
/// lines for seconds on its shared work queue, which stalls every other task in the process meanwhile.
@Suite("Hostile server over TCP", .serialized, .timeLimit(.minutes(3)))
struct HostileTests {
    /// A provider whose calls have 3 s, and whose requests time out after 10 s of silence.
    func provider(errorMapper: ErrorResponseMapper? = nil) -> NetworkProvider {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        return NetworkProvider(configuration: configuration, deadline: 3, errorMapper: errorMapper)
    }

    func call(_ base: URL, _ path: String) -> Call {
        Call(baseURL: base, path: path, requiresAuthentication: false)
    }

    @Test func aBodyCutShortIsRetriedForAGETAndNotForAPOST() async throws {
        try await withHostileServer { base in
            // GIVEN a RetryPolicy with no backoff, over a real connection that answers 10 of 100 declared bytes
            let attempts = AttemptCounter()
            let provider = NetworkProvider(
                configuration: .ephemeral, interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0), deadline: 10,
                monitors: [attempts])
            // WHEN a GET meets it, THEN it is a lost connection, tried 3 times (RFC 9110 §9.2.2: GET is idempotent)
            await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
                try await provider.response(call(base, "/short-body"))
            }
            // and a POST (no idempotency key) is tried once: it may have been applied
            var post = call(base, "/short-body")
            post.method = .post
            await #expect(throws: NetworkError.transportFailed(URLError(.networkConnectionLost))) {
                try await provider.response(post)
            }
            await provider.waitForMonitors()
            #expect(attempts.counts == [3, 1])
        }
    }

    @Test(arguments: ["/slow-headers", "/trickle", "/continue", "/truncated-chunked-hang"])
    func aServerThatNeverFinishesEndsAtTheDeadline(_ path: String) async throws {
        try await withHostileServer { base in
            let started = Date()
            await #expect {
                try await provider().response(call(base, path))
            } throws: { error in
                switch error {
                case NetworkError.deadlineExceeded(seconds: 3): return true
                case NetworkError.transportFailed: return path == "/continue"   // corelibs may give up on it first
                default: return false
                }
            }
            let elapsed = Date().timeIntervalSince(started)
            print("hostile \(path): ended after \(String(format: "%.2f", elapsed)) s")
            #expect(elapsed < 10, "a 3 s deadline must end the call promptly (generous margin for a loaded machine)")
        }
    }

    @Test(arguments: ["/basic-401", "/digest-401"])
    func a401WithAChallengeReachesValidation(_ path: String) async throws {
        try await withHostileServer { base in
            // GIVEN an error mapper that reads the challenge header
            struct Challenged: Error { let scheme: String? }
            let provider = provider(errorMapper: { response in Challenged(scheme: response.value(forHTTPHeaderField: "WWW-Authenticate")) })
            // WHEN the server answers 401 with a WWW-Authenticate challenge
            // THEN the call ends with that 401 (on Linux it would otherwise never complete)
            await #expect {
                try await provider.response(call(base, path))
            } throws: { error in
                (error as? Challenged)?.scheme?.hasPrefix(path == "/basic-401" ? "Basic" : "Digest") == true
            }
        }
    }

    /// The process's peak resident memory (VmHWM), in megabytes.
    func peakResidentMegabytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1_024
    }

    @Test func aGzipBombEndsAsTooLarge() async throws {
        try await withHostileServer { base in
            // GIVEN 100 KB of gzip that inflate to 100 MB, and a call allowing 1 MiB
            let provider = NetworkProvider(configuration: .ephemeral, deadline: 10, maximumResponseSize: 1 << 20)
            let before = peakResidentMegabytes()
            // WHEN it arrives, THEN the call ends with the size error (judged on the inflated size), not a 100 MB body
            await #expect {
                try await provider.response(call(base, "/gzip-bomb"))
            } throws: { error in
                guard case NetworkError.responseTooLarge(limit: 1 << 20) = error else { return false }
                return true
            }
            if let before, let after = peakResidentMegabytes() {
                print("hostile /gzip-bomb: peak RSS \(before) MB before, \(after) MB after")
            }
        }
    }

    @Test(arguments: [
        "/no-status-line", "/bad-content-length", "/short-body", "/conflicting-length", "/truncated-chunked-close",
        "/huge-header", "/many-headers", "/redirect-loop", "/redirect-file", "/redirect-data", "/redirect-ftp",
    ])
    func malformedAnswersEndInAValueOrATypedError(_ path: String) async throws {
        try await withHostileServer { base in
            let outcome: String
            do {
                let response = try await provider().response(call(base, path))
                outcome = "HTTP \(response.statusCode), \(response.data.count) bytes"
                #expect(!path.hasPrefix("/redirect"), "a redirect to another scheme or a loop must not succeed")
            } catch NetworkError.transportFailed(let error) {
                outcome = "URLError \(error.code.rawValue)"
                switch path {
                case "/redirect-loop": #expect(error.code == .httpTooManyRedirects)
                case "/redirect-file", "/redirect-data", "/redirect-ftp": #expect(error.code == .unsupportedURL)
                // a body cut short after its head: a lost connection on every platform, as a RetryPolicy expects
                case "/short-body", "/truncated-chunked-close": #expect(error.code == .networkConnectionLost)
                // two lengths that disagree: discarded (RFC 9112 §6.3 (5)), never a 200 with a cut body
                case "/conflicting-length": #expect(error.code == .cannotParseResponse)
                default: break   // malformed framing: URLSession's own code (-1, -1002 on Linux)
                }
            } catch let error as NetworkError {
                outcome = "\(error)"
                // corelibs resolves `file:` and `data:` Locations against the original host: an ordinary 404 there
                if case .invalidStatusCode(404) = error, path == "/redirect-file" || path == "/redirect-data" {
                } else if case .deadlineExceeded = error, path == "/many-headers" {
                } else {
                    Issue.record("\(path) ended with an unexpected \(error)")
                }
            } catch {
                Issue.record("\(path) threw an untyped \(type(of: error))")
                outcome = "untyped"
            }
            print("hostile \(path): \(outcome)")
        }
    }
}

/// The attempts of each finished call, in order.
private final class AttemptCounter: EventMonitor, @unchecked Sendable {
    // @unchecked: `finished` is guarded by `lock`.
    private let lock = NSLock()
    private var finished: [Int] = []

    var counts: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    func requestDidFinish(_ request: URLRequest, result: Result<Response, any Error>, attempts: Int, duration: TimeInterval, context: RequestContext) {
        lock.lock()
        finished.append(attempts)
        lock.unlock()
    }
}
