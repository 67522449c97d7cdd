// One call with the library in a process of its own, so its peak memory is not shared with other tests:
// `MemoryProbe BASE-URL PATH LIMIT [response|download|stream|urlsession]`, LIMIT in bytes or `default` (the
// provider's 64 MiB). It warms up with one small call to BASE-URL/small, resets the process's peak resident
// memory (VmHWM), makes the call, and prints one line of JSON: how the call ended, after how many seconds,
// and how far the peak rose above the resident memory before the call, in MiB. Used by BodyMemoryTests.
//
// `urlsession` makes the same call without the library: URLSession with a plain serial delegate queue and a
// delegate that counts the body, cancels the task (from another queue) once it passed LIMIT, and drops what
// still comes. What that mode measures is what FoundationNetworking and libcurl keep by themselves.
import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Get: Endpoint {
    let baseURL: URL
    let path: String
    var requiresAuthentication: Bool { false }
}

/// A field of /proc/self/status in KiB (`VmHWM`, `VmRSS`), or nil where there is none.
func status(_ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// Resets VmHWM to the current resident memory (Linux 4.0+); false where that is not allowed.
func resetPeak() -> Bool {
    guard let file = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? file.close() }
    return (try? file.write(contentsOf: Data("5".utf8))) != nil
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let base = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: MemoryProbe BASE-URL PATH LIMIT [response|download|stream]\n".utf8))
    exit(2)
}
let path = arguments[2]
let limit = arguments[3] == "default" ? NetworkProvider.defaultMaximumResponseSize : Int(arguments[3]) ?? 0
let mode = arguments.count > 4 ? arguments[4] : "response"
let provider = NetworkProvider(configuration: .ephemeral, deadline: 60, maximumResponseSize: limit)
_ = try? await provider.response(Get(baseURL: base, path: "/small"))   // libcurl and the session set up before measuring
let reset = resetPeak()
let baseline = (reset ? status("VmRSS") : status("VmHWM")) ?? 0
let started = Date()
var outcome: String
/// The `urlsession` mode's delegate.
final class Counter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `received` and `stopped` are touched only on the session's serial delegate queue.
    let limit: Int
    var received = 0
    var stopped = false
    let done = DispatchSemaphore(value: 0)
    var error: (any Error)?

    init(limit: Int) { self.limit = limit }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        received += data.count
        guard !stopped, received > limit else { return }
        stopped = true
        DispatchQueue.global().async { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error = error
        done.signal()
    }
}

do {
    switch mode {
    case "urlsession":
        let delegate = Counter(limit: limit)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: queue)
        session.dataTask(with: base.appendingPathComponent(String(path.dropFirst()))).resume()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                delegate.done.wait()
                continuation.resume()
            }
        }
        session.finishTasksAndInvalidate()
        outcome = delegate.stopped ? "cancelled over the limit" : "finished: \(delegate.error.map { "\($0)" } ?? "whole")"
    case "download":
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("memory-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try await provider.download(Get(baseURL: base, path: path), to: file)
        outcome = "finished"
    case "stream":
        var bytes = 0
        for try await chunk in try await provider.stream(Get(baseURL: base, path: path)) { bytes += chunk.count }
        outcome = "finished after \(bytes) bytes"
    default:
        outcome = "finished with \(try await provider.response(Get(baseURL: base, path: path)).data.count) bytes"
    }
} catch NetworkError.responseTooLarge(let limit) {
    outcome = "responseTooLarge(\(limit))"
} catch {
    outcome = String(describing: error)
}
let seconds = Date().timeIntervalSince(started)
try? await Task.sleep(nanoseconds: 300_000_000)   // anything still queued when the call ended counts too
let peak = status("VmHWM") ?? 0
let line: [String: Any] = [
    "outcome": outcome, "seconds": (seconds * 100).rounded() / 100, "growthMiB": max(0, peak - baseline) / 1_024,
    "baselineMiB": baseline / 1_024, "peakMiB": peak / 1_024, "peakWasReset": reset,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
