import Foundation
import Networking
import NetworkingTestSupport

// `probe outbox-memory <count>` (compare.sh's outbox-memory line, run natively, not under valgrind): how much the
// process's peak resident memory rises while an outbox takes <count> mutations with 4 KB bodies (never delivered),
// and again while a new outbox opens the folder they are stored in. The outbox keeps bodies on disk, not in memory:
// what it holds per mutation is its metadata.

/// `POST /v1/memos` with a JSON body of 4 KB.
struct MemoEndpoint: Endpoint {
    struct Memo: Codable, Sendable {
        let id: Int
        let text: String
    }

    let id: Int
    let baseURL: URL
    var path: String { "/memos" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(Memo(id: id, text: MemoEndpoint.text)) }

    /// 4,096 characters.
    static let text = String(repeating: "0123456789abcdef", count: 256)
}

/// A field of /proc/self/status in KiB (`VmHWM`, `VmRSS`), or nil where there is none.
func procStatus(_ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// Resets VmHWM to the current resident memory (Linux 4.0+); false where that is not allowed.
func resetPeakMemory() -> Bool {
    guard let file = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? file.close() }
    return (try? file.write(contentsOf: Data("5".utf8))) != nil
}

/// Gives the memory malloc holds free back to the system (glibc's `malloc_trim`, looked up at run time: Swift's
/// Glibc module does not import it), so that the resident memory is what is in use.
func trimMalloc() {
    #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
    #endif
}

/// How far the peak rose above the resident memory before `body` ran, and how much more is resident after it (once
/// malloc gave back what is free), in KiB.
func peakGrowth(_ body: () async throws -> Void) async throws -> (peak: Int, held: Int) {
    trimMalloc()
    let reset = resetPeakMemory()
    let before = procStatus("VmRSS") ?? 0
    let baseline = (reset ? before : procStatus("VmHWM")) ?? 0
    try await body()
    let peak = procStatus("VmHWM") ?? 0
    trimMalloc()
    return (max(0, peak - baseline), max(0, (procStatus("VmRSS") ?? 0) - before))
}

/// Measures an outbox holding `count` mutations and returns compare.sh's line.
func outboxMemory(count: Int) async throws -> String {
    let base = URL(string: "https://api.example.com/v1")!
    let server = MockServer(recordingLimit: 0)
    let provider = server.makeProvider()
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("networking-probe-outbox-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    // Warm up: the code paths and the first allocations of an outbox, in a folder of their own.
    let warm = try await Outbox(folder: scratch.appendingPathComponent("warm"), provider: provider)
    for id in 0..<10 { try await warm.enqueue(MemoEndpoint(id: id, baseURL: base)) }
    await warm.close()

    let folder = scratch.appendingPathComponent("queued")
    var queued: Outbox? = try await Outbox(folder: folder, provider: provider)
    let enqueueGrowth = try await peakGrowth {
        for id in 0..<count { try await queued?.enqueue(MemoEndpoint(id: id, baseURL: base)) }
    }
    await queued?.close()
    queued = nil

    var reopened: Outbox?
    var pending = 0
    let openGrowth = try await peakGrowth {
        reopened = try await Outbox(folder: folder, provider: provider)
        pending = await reopened?.pending.count ?? 0
    }
    await reopened?.close()
    guard pending == count else { throw Failure.status(pending) }
    let bodies = count * MemoEndpoint.text.utf8.count
    let each = { (kib: Int) in "\(kib / 1_024) MiB, \(kib * 1_024 / max(count, 1)) B each" }
    return "outbox-memory: \(enqueueGrowth.peak * 1_024 / max(count, 1)) B per queued mutation (peak RSS growth while enqueueing \(count) "
        + "with 4 KB bodies, \(bodies >> 20) MiB of bodies: +\(each(enqueueGrowth.peak)), still resident after: +\(each(enqueueGrowth.held)); "
        + "opening the folder they are stored in: peak +\(each(openGrowth.peak)), resident after +\(each(openGrowth.held)))"
}

/// Runs ``outboxMemory(count:)`` to its end, prints its line and exits (0, or 1 with the error on standard error).
func runOutboxMemory(count: Int) -> Never {
    runToExit { try await outboxMemory(count: count) }
}

/// Runs `line` in a detached task to its end (`main` is synchronous: callgrind crashes on an async main here),
/// prints what it returns and exits 0, or prints its error on standard error and exits 1.
func runToExit(_ line: @escaping @Sendable () async throws -> String) -> Never {
    let finished = DispatchSemaphore(value: 0)
    let result = ResultBox()
    Task.detached {
        do {
            result.set(.success(try await line()))
        } catch {
            result.set(.failure(error))
        }
        finished.signal()
    }
    finished.wait()
    switch result.get() {
    case .success(let line)?:
        print(line)
        exit(0)
    case .failure(let error)?:
        FileHandle.standardError.write(Data("probe: \(error)\n".utf8))
        exit(1)
    case nil:
        exit(1)
    }
}

/// The result of the detached task, read after it signalled.
final class ResultBox: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Result<String, any Error>?

    func set(_ value: Result<String, any Error>) { lock.withLock { self.value = value } }
    func get() -> Result<String, any Error>? { lock.withLock { value } }
}
