import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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
final class Signal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func fire() {
        lock.lock()
        fired = true
        let waiters = self.waiters
        self.waiters = []
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if fired {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}
