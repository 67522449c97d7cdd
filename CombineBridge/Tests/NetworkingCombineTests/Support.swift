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

/// The values one side appends, in order.
final class Counter<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `appended` is guarded by `lock`.
    private let lock = NSLock()
    private var appended: [Value] = []

    /// Appends `value`.
    func append(_ value: Value) {
        lock.lock()
        appended.append(value)
        lock.unlock()
    }

    /// The values appended so far.
    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return appended
    }
}
