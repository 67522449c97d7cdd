import Foundation
import Networking
import Testing

#if canImport(Combine)
    import Combine
#else
    import OpenCombine
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A minute per test, so a hung test fails instead of hanging the run (`TimeLimitTrait` needs macOS 13 /
/// iOS 16: older Apple OSes run the same tests with no limit).
enum SuiteTimeLimit {
    static var oneMinute: any SuiteTrait {
        if #available(macOS 13, iOS 16, tvOS 16, watchOS 9, *) {
            return TimeLimitTrait.timeLimit(.minutes(1))
        }
        return NoTimeLimit()
    }

    /// A trait that changes nothing.
    struct NoTimeLimit: SuiteTrait, TestTrait {}
}

/// An endpoint of the tests' API, `https://api.example.com/v1/<path>`.
struct API: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "/users/1"
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var queryItems: [URLQueryItem] = []
    var body: RequestBody = .none
    var timeout: TimeInterval?
    var maximumResponseSize: Int?
    var acceptableStatusCodes: Set<Int> = Set(200..<300)
    var requiresAuthentication = false
}

/// The body the tests' `/users/1` answers with.
struct User: Codable, Equatable, Sendable {
    let id: Int
    let name: String
}

/// A subscriber that asks for values only when the test says so (``request(_:)``), and records what it
/// receives; tests await what they expect with ``values(count:)`` and ``completion()``.
final class Probe<Input: Sendable>: Subscriber, @unchecked Sendable {
    typealias Failure = any Error

    // @unchecked: every `var` is guarded by `lock`.
    private let lock = NSLock()
    private let initialDemand: Subscribers.Demand
    private var subscription: (any Subscription)?
    private var received: [Input] = []
    private var ended: Subscribers.Completion<any Error>?
    private var waiters: [(ready: () -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    /// A probe that asks for `initialDemand` values when it subscribes.
    init(initialDemand: Subscribers.Demand = .unlimited) {
        self.initialDemand = initialDemand
    }

    func receive(subscription: any Subscription) {
        lock.lock()
        self.subscription = subscription
        lock.unlock()
        if initialDemand > 0 { subscription.request(initialDemand) }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        update { received.append(input) }
        return .none
    }

    func receive(completion: Subscribers.Completion<any Error>) {
        update { ended = completion }
    }

    /// Asks the subscription for `count` more values.
    func request(_ count: Int) {
        lock.lock()
        let subscription = self.subscription
        lock.unlock()
        subscription?.request(.max(count))
    }

    /// Cancels the subscription.
    func cancel() {
        lock.lock()
        let subscription = self.subscription
        lock.unlock()
        subscription?.cancel()
    }

    /// The values received so far.
    var values: [Input] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// The completion received, if any.
    var completed: Subscribers.Completion<any Error>? {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// Waits until `count` values (or a completion) arrived, and returns the values.
    func values(count: Int) async -> [Input] {
        await waitUntil { self.received.count >= count || self.ended != nil }
        return values
    }

    /// Waits until a value that satisfies `condition` (or a completion) arrived, and returns the values.
    func values(until condition: @escaping (Input) -> Bool) async -> [Input] {
        await waitUntil { self.received.contains(where: condition) || self.ended != nil }
        return values
    }

    /// Waits for the completion, and returns it.
    func completion() async -> Subscribers.Completion<any Error>? {
        await waitUntil { self.ended != nil }
        return completed
    }

    /// The failure the publisher ended with, after waiting for it; `nil` when it finished.
    func failure() async -> (any Error)? {
        if case .failure(let error) = await completion() { return error }
        return nil
    }

    private func update(_ change: () -> Void) {
        lock.lock()
        change()
        let ready = waiters.filter { $0.ready() }
        waiters.removeAll { $0.ready() }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until `ready` (read with `lock` held) holds; the suite's time limit ends a test that waits forever.
    private func waitUntil(_ ready: @escaping () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if ready() {
                lock.unlock()
                continuation.resume()
                return
            }
            waiters.append((ready, continuation))
            lock.unlock()
        }
    }
}

/// An async sequence of `0..<count` that counts how many values were read from it: what a publisher
/// pulled, whether or not it sent them on.
final class CountingSequence: AsyncSequence, @unchecked Sendable {
    typealias Element = Int

    // @unchecked: `reads` is guarded by `lock`.
    private let lock = NSLock()
    private var reads = 0
    let count: Int

    init(count: Int) {
        self.count = count
    }

    /// How many values were read so far.
    var readCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return reads
    }

    /// The next value, counted; `nil` after the last.
    private func read() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard reads < count else { return nil }
        reads += 1
        return reads - 1
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: CountingSequence

        mutating func next() async throws -> Int? {
            sequence.read()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }
}

/// A new empty folder for a test's files.
func makeScratchFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("combine-bridge-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// `count` bytes of a repeating pattern.
func fileBody(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
}

/// A flag that one side sets and the other awaits.
final class Flag: @unchecked Sendable {
    // @unchecked: `isSet` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private var raised = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Sets the flag, waking every waiter.
    func set() {
        lock.lock()
        raised = true
        let waiters = self.waiters
        self.waiters = []
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the flag is set.
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return raised
    }

    /// Waits until the flag is set.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if raised {
                lock.unlock()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// A value that one side puts once and the other awaits.
final class Mailbox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`; `arrived` is thread-safe.
    private let lock = NSLock()
    private var value: Value?
    private let arrived = Flag()

    /// Puts `value`, unless one was put before.
    func put(_ value: Value) {
        lock.lock()
        if self.value == nil { self.value = value }
        lock.unlock()
        arrived.set()
    }

    /// Waits for the value.
    func take() async -> Value? {
        await arrived.wait()
        return stored
    }

    private var stored: Value? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
