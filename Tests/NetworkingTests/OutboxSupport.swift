import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

/// A write of the outbox tests: `POST https://api.example.com/v1/<path>`.
struct OutboxWrite: Endpoint {
    var baseURL = URL(string: "https://api.example.com/v1/")!
    var path = "notes"
    var method: HTTPMethod = .post
    var headers: [String: String] = [:]
    var queryItems: [URLQueryItem] = []
    var body: RequestBody = .data(Data("{}".utf8), contentType: "application/json")
    var requiresAuthentication = false

    /// A JSON write whose body is `{"n": n}`.
    static func note(_ n: Int, path: String = "notes", authenticated: Bool = false) -> OutboxWrite {
        OutboxWrite(path: path, body: .json(["n": n]), requiresAuthentication: authenticated)
    }
}

/// Collects an outbox's outcomes from the moment it is made.
final class OutcomeLog: @unchecked Sendable {
    // @unchecked: `outcomes` is guarded by `lock`.
    private let lock = NSLock()
    private var outcomes: [OutboxOutcome] = []
    private var task: Task<Void, Never>?

    init(_ outbox: Outbox) {
        let sequence = outbox.outcomes
        var iterator = sequence.makeAsyncIterator()   // made now: every outcome from here on
        let task = Task { [weak self] in
            while let outcome = await iterator.next() { self?.append(outcome) }
        }
        lock.lock()
        self.task = task
        lock.unlock()
    }

    deinit {
        task?.cancel()
    }

    private func append(_ outcome: OutboxOutcome) {
        lock.lock()
        defer { lock.unlock() }
        outcomes.append(outcome)
    }

    var all: [OutboxOutcome] {
        lock.lock()
        defer { lock.unlock() }
        return outcomes
    }

    /// The mutations delivered, in the order they were.
    var delivered: [OutboxMutation] {
        all.compactMap { if case .delivered(let mutation, _) = $0 { return mutation } else { return nil } }
    }

    /// The mutations failed for good, with the error's description.
    var failed: [(OutboxMutation, String)] {
        all.compactMap { if case .failed(let mutation, let error) = $0 { return (mutation, "\(error)") } else { return nil } }
    }

    /// The mutations discarded, with the reason.
    var discarded: [(OutboxMutation, OutboxDiscardReason)] {
        all.compactMap { if case .discarded(let mutation, let reason) = $0 { return (mutation, reason) } else { return nil } }
    }

    /// The damaged records reported.
    var damaged: [OutboxDamagedRecord] {
        all.compactMap { if case .damagedRecord(let record) = $0 { return record } else { return nil } }
    }

    /// Waits until `condition` holds of the outcomes.
    func wait(until condition: @escaping @Sendable (OutcomeLog) -> Bool) async {
        await pollUntil { condition(self) }
    }
}

/// A retry pause that lasts until the task is cancelled (the outbox is closed or the mutation retried):
/// the tests decide when a paused mutation goes again, with ``Outbox/retry(_:)``.
let pausesUntilRetried: @Sendable (TimeInterval) async throws -> Void = { _ in
    while true { try await Task.sleep(nanoseconds: 60_000_000_000) }
}

/// A configuration whose pauses last until a retry.
func outboxConfiguration(
    maximumCount: Int = 10_000, maximumBytes: Int64 = 100 * 1_024 * 1_024, accountPolicy: OutboxAccountPolicy = .hold
) -> OutboxConfiguration {
    var configuration = OutboxConfiguration(maximumCount: maximumCount, maximumBytes: maximumBytes, accountPolicy: accountPolicy)
    configuration.sleep = pausesUntilRetried
    return configuration
}

/// The `n` of each recorded request's JSON body, in the order the server received them.
func notesReceived(by server: MockServer, path: String = "/v1/notes") -> [Int] {
    server.requests(.post, path).compactMap { try? $0.decodeBody(as: [String: Int].self)["n"] }
}

/// The lines of the outbox folder's delivered log (none when there is no log).
func deliveredLog(in folder: URL) -> [String] {
    let text = (try? String(contentsOf: folder.appendingPathComponent("delivered.log"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
}

/// The files of the outbox folder's `records` subfolder.
func recordFiles(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("records").path)) ?? []).sorted()
}
