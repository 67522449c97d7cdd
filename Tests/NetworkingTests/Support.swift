import Foundation
import Networking
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Time limits for suites, spelled so that the tests compile at the package's Apple minimums
/// (iOS 15 / macOS 12 / tvOS 15 / watchOS 8).
///
/// Swift Testing's `TimeLimitTrait` (`.timeLimit(.minutes(1))`) needs macOS 13 / iOS 16 / tvOS 16 /
/// watchOS 9, so a suite never spells it directly (`.ci/apple-compat.sh` checks this); it writes
/// `@Suite("…", SuiteTimeLimit.oneMinute)` instead.
enum SuiteTimeLimit {
    /// A minute per test, so a hung test fails instead of hanging the run: on Linux, and on Apple OSes
    /// from macOS 13 / iOS 16 / tvOS 16 / watchOS 9. Older Apple OSes run the same tests with no limit.
    static var oneMinute: any SuiteTrait { minutes(1) }

    /// Three minutes per test, for suites with storms of hundreds to thousands of calls: about 25 s each
    /// under ThreadSanitizer here, and CI machines have run the tests twice as slowly. Still finite, so a
    /// hung test fails.
    static var threeMinutes: any SuiteTrait { minutes(3) }

    private static func minutes(_ count: Int) -> any SuiteTrait {
        if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
            return TimeLimitTrait.timeLimit(.minutes(count))
        }
        return NoTimeLimit()
    }

    /// A trait that changes nothing: what ``oneMinute`` and ``threeMinutes`` are where `TimeLimitTrait` does not exist.
    struct NoTimeLimit: SuiteTrait, TestTrait {}
}

/// A thread-safe counter and log that interceptors in tests write to.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []

    func append(_ value: Value) {
        lock.lock()
        defer { lock.unlock() }
        values.append(value)
    }

    var all: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }

    var count: Int { all.count }
}

/// An adapter that sets a header to a fixed value and logs that it ran.
struct HeaderAdapter: RequestInterceptor {
    let name: String
    let value: String
    var log: Recorder<String>?

    func adapt(_ request: URLRequest, for context: RequestContext) async throws -> URLRequest {
        log?.append("adapt \(value)")
        var request = request
        let previous = request.value(forHTTPHeaderField: name)
        request.setValue(previous.map { "\($0),\(value)" } ?? value, forHTTPHeaderField: name)
        return request
    }
}

/// A retrier that answers the same thing every time and logs each question.
struct FixedRetrier: RequestInterceptor {
    let result: RetryResult
    var log: Recorder<String>?
    var label = "retrier"

    func retry(_ request: URLRequest, dueTo error: any Error, response: Response?, context: RequestContext) async -> RetryResult {
        log?.append("\(label) retry #\(context.retryCount) status=\(response?.statusCode ?? 0)")
        return result
    }
}

/// A one-shot signal a test awaits, e.g. "the server has received the request".
///
/// A wait also ends when the waiting task is cancelled (a test past its time limit is cancelled), so a
/// signal that never fires fails its test instead of hanging the whole run.
final class Signal: @unchecked Sendable {
    // @unchecked: `fired`, `waiters` and `nextID` are guarded by `lock`.
    private let lock = NSLock()
    private var fired = false
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextID = 0

    func fire() {
        lock.lock()
        fired = true
        let waiters = self.waiters.values
        self.waiters = [:]
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal fired, or once the waiting task is cancelled.
    func wait() async {
        let id = takeID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lock.lock()
                if fired || Task.isCancelled {
                    lock.unlock()
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let waiter = waiters.removeValue(forKey: id)
            lock.unlock()
            waiter?.resume()
        }
    }

    private func takeID() -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        return nextID
    }
}

/// A new scratch folder in the temporary directory, for one test; the test removes it.
func makeScratchFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}
