import Foundation
import Networking
import NetworkingTestSupport

// `probe outbox-replay-time <rounds>` (natively; pin it with `taskset -c 0` as compare.sh pins the benchmarks):
// alternates delivering 1,000 queued mutations through an Outbox and sending the same 1,000 POSTs directly, one
// provider for both, and prints both medians (wall clock) and their ratio: a quick twin of compare.sh's
// outbox-replay line (the benchmark package's) for working on the delivery path. For callgrind and perf:
// `probe outbox-replay <count>` (make a folder of <count>, open it, deliver, close), `outbox-replay-open <count>`
// (the same without delivering: subtract it), `outbox-direct <count>`, `outbox-replay-template <count>`, and
// `outbox-replay-rounds <n>` / `outbox-replay-rounds-open <n>` / `outbox-direct-rounds <n>` (n rounds of 1,000 on
// one folder template and one provider: the differences give a delivery's instructions under callgrind).

/// `POST /v1/notes` with a JSON body of about 1 KB, as the benchmark's.
struct ReplayNoteEndpoint: Endpoint {
    struct Note: Codable, Sendable {
        let id: Int
        let text: String
    }

    let id: Int
    var key: String?
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/notes" }
    var method: HTTPMethod { .post }
    var headers: [String: String] { key.map { ["Idempotency-Key": $0] } ?? [:] }
    var body: RequestBody { .json(Note(id: id, text: ReplayNoteEndpoint.text)) }

    static let text = String(repeating: "A walk along the harbour at dawn. ", count: 29)
}

func replayServer() -> MockServer {
    let server = MockServer(recordingLimit: 0)
    server.stub(.post, "/v1/notes", .json(["saved": true], statusCode: 201))
    return server
}

/// A folder holding `count` queued mutations.
func replayTemplate(count: Int, at folder: URL) async throws {
    let outbox = try await Outbox(folder: folder, provider: replayServer().makeProvider())
    for id in 0..<count { try await outbox.enqueue(ReplayNoteEndpoint(id: id)) }
    await outbox.close()
}

/// Nanoseconds to deliver the mutations in a copy of `template`.
func timeReplay(template: URL, count: Int, provider: NetworkProvider, delivers: Bool = true) async throws -> UInt64 {
    let folder = template.deletingLastPathComponent().appendingPathComponent("replay-\(UUID().uuidString)")
    try FileManager.default.copyItem(at: template, to: folder)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outbox = try await Outbox(folder: folder, provider: provider)
    var outcomes = outbox.outcomes.makeAsyncIterator()
    if !delivers {
        await outbox.close()
        return 0
    }
    let start = DispatchTime.now().uptimeNanoseconds
    await outbox.startDelivering()
    var delivered = 0
    while delivered < count, let outcome = await outcomes.next() {
        guard case .delivered = outcome else { throw Failure.status(-2) }
        delivered += 1
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    await outbox.close()
    return elapsed
}

/// Nanoseconds to send `count` POSTs directly.
func timeDirect(count: Int, provider: NetworkProvider) async throws -> UInt64 {
    let endpoints = (0..<count).map { ReplayNoteEndpoint(id: $0, key: UUID().uuidString) }
    let start = DispatchTime.now().uptimeNanoseconds
    for endpoint in endpoints { _ = try await provider.response(endpoint) }
    return DispatchTime.now().uptimeNanoseconds - start
}

/// Nanoseconds to send `count` POSTs directly from one task while another reads each response from an
/// `AsyncStream`, as an app reads the outbox's outcomes: the cost of reporting each result to another task.
func timeDirectReported(count: Int, provider: NetworkProvider) async throws -> UInt64 {
    let endpoints = (0..<count).map { ReplayNoteEndpoint(id: $0, key: UUID().uuidString) }
    let (responses, continuation) = AsyncStream.makeStream(of: Response.self)
    let start = DispatchTime.now().uptimeNanoseconds
    let sender = Task {
        defer { continuation.finish() }
        for endpoint in endpoints { continuation.yield(try await provider.response(endpoint)) }
    }
    var read = 0
    for await _ in responses { read += 1 }
    try await sender.value
    guard read == count else { throw Failure.status(-3) }
    return DispatchTime.now().uptimeNanoseconds - start
}

func outboxReplay(mode: String, count: Int) async throws -> String {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("networking-probe-replay-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    let template = scratch.appendingPathComponent("template")
    let perRound = 1_000
    let provider = replayServer().makeProvider()
    switch mode {
    case "outbox-replay":
        try await replayTemplate(count: count, at: template)
        return "replay \(try await timeReplay(template: template, count: count, provider: provider) / 1_000) µs"
    case "outbox-replay-open":
        try await replayTemplate(count: count, at: template)
        return "open \(try await timeReplay(template: template, count: count, provider: provider, delivers: false))"
    case "outbox-replay-rounds", "outbox-replay-rounds-open":   // for perf: <count> rounds, with or without delivering
        try await replayTemplate(count: perRound, at: template)
        for _ in 0..<count {
            _ = try await timeReplay(template: template, count: perRound, provider: provider, delivers: mode == "outbox-replay-rounds")
        }
        return "rounds \(count)"
    case "outbox-direct-rounds":
        for _ in 0..<count { _ = try await timeDirect(count: perRound, provider: provider) }
        return "rounds \(count)"
    case "outbox-replay-template":
        try await replayTemplate(count: count, at: template)
        return "template"
    case "outbox-direct":
        return "direct \(try await timeDirect(count: count, provider: provider) / 1_000) µs"
    default:
        try await replayTemplate(count: perRound, at: template)
        var replays: [UInt64] = []
        var directs: [UInt64] = []
        var reported: [UInt64] = []
        for _ in 0..<count {
            replays.append(try await timeReplay(template: template, count: perRound, provider: provider))
            directs.append(try await timeDirect(count: perRound, provider: provider))
            reported.append(try await timeDirectReported(count: perRound, provider: provider))
        }
        let r = replays.sorted()[replays.count / 2]
        let d = directs.sorted()[directs.count / 2]
        let p = reported.sorted()[reported.count / 2]
        // Each round times both sides back to back: a load that drifts moves both sides of that round's ratio.
        let paired = zip(replays, directs).map { Double($0) / Double($1) }.sorted()[count / 2]
        return String(
            format: "outbox-replay-time: %.3fx (replay %.1f ms, direct %.1f ms, medians of %d; median of the rounds' ratios %.3fx); "
                + "direct with each response read by another task: %.1f ms (replay ÷ it: %.3fx)",
            Double(r) / Double(d), Double(r) / 1e6, Double(d) / 1e6, count, paired, Double(p) / 1e6, Double(r) / Double(p))
    }
}

/// Runs ``outboxReplay(mode:count:)`` to its end, prints its line and exits.
func runOutboxReplay(mode: String, count: Int) -> Never {
    runToExit { try await outboxReplay(mode: mode, count: count) }
}
