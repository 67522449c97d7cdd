import Benchmark
import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The durable outbox (issue 32), in pairs that compare.sh divides:
//   outbox-enqueue ÷ fsync-write-1k    a persisted enqueue (a 1 KB JSON body) ÷ one fsync'd 1 KB file write, same run
//   outbox-replay ÷ outbox-direct      delivering 1,000 queued mutations ÷ sending the same 1,000 POSTs (with an
//                                      Idempotency-Key each) one after another through the provider; both through
//                                      the mock transport (target ≤ 1.10x)
// Every iteration gets a fresh folder, made (and, for the replay, filled) before startMeasurement(); both sides of
// the replay pair send through one provider made in setup (a new URLSession's first requests are not the outbox's).

/// Enqueues (or file writes) per iteration.
let outboxEnqueueCount = 20
/// Mutations delivered per replay iteration.
let outboxReplayCount = 1_000

/// `POST /v1/notes` with a JSON body of about 1 KB: the mutation every outbox benchmark sends.
struct NoteEndpoint: Endpoint {
    struct Note: Codable, Sendable {
        let id: Int
        let text: String
    }

    let id: Int
    var baseURL: URL { Fixture.baseURL }
    var path: String { "/notes" }
    var method: HTTPMethod { .post }
    var headers: [String: String] { key.map { ["Idempotency-Key": $0] } ?? [:] }
    var body: RequestBody { .json(Note(id: id, text: NoteEndpoint.text)) }
    /// The idempotency key, when sent directly (the outbox sets its own).
    var key: String?

    init(id: Int, key: String? = nil) {
        self.id = id
        self.key = key
    }

    /// About 1,000 characters of text.
    static let text = String(repeating: "A walk along the harbour at dawn. ", count: 29)
}

enum OutboxFixture {
    /// A new empty folder under the temporary folder.
    static func folder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-bench-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A mock server answering every `POST /v1/notes` with 201.
    static func notesServer() -> MockServer {
        let server = MockServer(recordingLimit: 0)
        server.stub(.post, "/v1/notes", .json(["saved": true], statusCode: 201))
        return server
    }

    /// Where the replay's template lives while its benchmark runs (setup makes it, teardown removes it).
    static let templateFolder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-bench-replay-template-\(getpid())")

    /// A closed outbox folder holding `count` queued mutations (``templateFolder``), made once per benchmark
    /// (setup) and copied per iteration.
    static func template(count: Int) async throws -> URL {
        let folder = templateFolder
        try? FileManager.default.removeItem(at: folder)
        let outbox = try await Outbox(folder: folder, provider: notesServer().makeProvider())
        for id in 0..<count { try await outbox.enqueue(NoteEndpoint(id: id)) }
        await outbox.close()
        return folder
    }

    /// Writes 1 KB to a new file and fsyncs it: the unit `outbox-enqueue` is measured against.
    static func fsyncWrite(_ bytes: [UInt8], to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchmarkFailure.unexpected("open \(path): errno \(errno)") }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else { throw BenchmarkFailure.unexpected("write \(path): errno \(errno)") }
    }
}

func registerOutboxBenchmarks() {
    Benchmark("outbox-enqueue", configuration: configuration(seconds: 5)) { benchmark in
        let folder = try OutboxFixture.folder("enqueue")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = try await Outbox(folder: folder, provider: OutboxFixture.notesServer().makeProvider())
        benchmark.startMeasurement()
        for id in 0..<outboxEnqueueCount {
            blackHole(try await outbox.enqueue(NoteEndpoint(id: id)))
        }
        benchmark.stopMeasurement()
        await outbox.close()
        benchmark.measurement(requestsMetric, outboxEnqueueCount)
    }

    Benchmark("fsync-write-1k", configuration: configuration(seconds: 5)) { benchmark in
        let folder = try OutboxFixture.folder("fsync")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 1_024)
        let paths = (0..<outboxEnqueueCount).map { folder.appendingPathComponent("\($0).bin").path }
        benchmark.startMeasurement()
        for path in paths {
            try OutboxFixture.fsyncWrite(bytes, to: path)
        }
        benchmark.stopMeasurement()
        benchmark.measurement(requestsMetric, outboxEnqueueCount)
    }

    Benchmark(
        "outbox-replay",
        configuration: configuration(seconds: 10),
        closure: { benchmark, fixture in
            let (template, provider) = fixture
            let folder = try OutboxFixture.folder("replay")
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.copyItem(at: template, to: folder)
            defer { try? FileManager.default.removeItem(at: folder) }
            let outbox = try await Outbox(folder: folder, provider: provider)
            var outcomes = outbox.outcomes.makeAsyncIterator()
            benchmark.startMeasurement()
            await outbox.startDelivering()
            var delivered = 0
            while delivered < outboxReplayCount, let outcome = await outcomes.next() {
                guard case .delivered = outcome else { throw BenchmarkFailure.unexpected("outbox-replay: \(outcome)") }
                delivered += 1
            }
            benchmark.stopMeasurement()
            await outbox.close()
            benchmark.measurement(requestsMetric, outboxReplayCount)
        },
        // One provider for every iteration, as outbox-direct's: both sides send through a warm URLSession.
        setup: { (try await OutboxFixture.template(count: outboxReplayCount), OutboxFixture.notesServer().makeProvider()) },
        teardown: { try? FileManager.default.removeItem(at: OutboxFixture.templateFolder) }
    )

    Benchmark(
        "outbox-direct",
        configuration: configuration(seconds: 10),
        closure: { benchmark, provider in
            let endpoints = (0..<outboxReplayCount).map { NoteEndpoint(id: $0, key: UUID().uuidString) }
            benchmark.startMeasurement()
            for endpoint in endpoints {
                blackHole(try await provider.response(endpoint))
            }
            benchmark.stopMeasurement()
            benchmark.measurement(requestsMetric, outboxReplayCount)
        },
        setup: { OutboxFixture.notesServer().makeProvider() }
    )
}
