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

/// Writes the app must not lose: a diary entry saved offline is kept on disk and delivered once when the network
/// returns; a process killed (SIGKILL) while its write is on the wire sends it again at the next launch, with the same
/// idempotency key, so a server that honours `Idempotency-Key` applies it once.
///
/// The kill is real: the demo runs itself again as a child process (``childFlag``), which enqueues an entry and
/// starts delivering it to a server that applies it and then holds the answer; once the child printed that the server
/// applied it, the demo kills the child and opens the outbox the child left.
enum OutboxDemo {
    struct Entry: Codable, Sendable {
        let text: String
    }

    struct SaveEntry: Endpoint {
        let entry: Entry
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/diary" }
        var method: HTTPMethod { .post }
        var body: RequestBody { .json(entry) }
    }

    /// The argument that makes the demo the child this section kills: `--outbox-demo-child FOLDER LEDGER`.
    static let childFlag = "--outbox-demo-child"

    static func run() async throws {
        print("== Outbox: writes kept on disk, delivered once, across a kill")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("networking-demo-outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try await offlineThenOnline(folder: scratch.appendingPathComponent("offline"))
        try await killedMidDelivery(folder: scratch.appendingPathComponent("killed"), ledger: scratch.appendingPathComponent("server-ledger"))
        print()
    }

    /// A write made offline waits on disk and is delivered once when the network returns.
    private static func offlineThenOnline(folder: URL) async throws {
        let server = MockServer()
        server.stub(.post, "/v1/diary", .json(["saved": true], statusCode: 201))
        let connectivity = ManualConnectivity(isOnline: false)
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider(connectivity: connectivity))
        await outbox.startDelivering()
        let mutation = try await outbox.enqueue(SaveEntry(entry: Entry(text: "Walked to the harbour")))
        let pending = await outbox.pending.count
        print("offline, enqueue         on disk before it returned, Idempotency-Key \(mutation.idempotencyKey)")
        print("                         \(pending) pending; the server saw \(server.requests.count) requests")
        connectivity.set(online: true)
        let (delivered, status) = try await firstDelivery(of: outbox)
        let keys = server.requests.map { $0.header("Idempotency-Key") ?? "none" }
        let same = delivered.idempotencyKey == mutation.idempotencyKey && keys == [mutation.idempotencyKey]
        print("back online, delivered   \(status); the server saw \(keys.count) POST, with \(same ? "the same key" : "ANOTHER KEY: \(keys)")")
        await outbox.close()
    }

    /// A child process enqueues an entry and is killed while its delivery is on the wire; the next "launch" (this
    /// process, on the same folder) sends it again with the same key, and the server, which applied it already,
    /// answers with the stored answer instead of applying it twice.
    private static func killedMidDelivery(folder: URL, ledger: URL) async throws {
        let child = Process()
        child.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = [childFlag, folder.path, ledger.path]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let applied = try await line(from: output.fileHandleForReading, startingWith: "applied ")
        let key = String(applied.dropFirst("applied ".count))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        print("child process, enqueue   Idempotency-Key \(key); the server applied it and holds the answer: SIGKILL now")

        // The next launch: the same folder, the same server (its ledger of applied keys lives on disk).
        let server = MockServer()
        server.stub(.post, "/v1/diary") { request in
            let key = request.header("Idempotency-Key") ?? ""
            if try appliedKeys(ledger).contains(key) {
                return MockResponse(statusCode: 201, headers: ["Idempotent-Replayed": "true"], body: Data(#"{"saved":true}"#.utf8))
            }
            try record(key, in: ledger)
            return MockResponse(statusCode: 201, body: Data(#"{"saved":true}"#.utf8))
        }
        let outbox = try await Outbox(folder: folder, provider: server.makeProvider())
        let resumed = await outbox.pending
        let keys = resumed.map(\.idempotencyKey).joined(separator: ", ")
        print("relaunch, outbox opened  \(resumed.count) stored write\(resumed.count == 1 ? "" : "s"), Idempotency-Key \(keys)")
        await outbox.startDelivering()
        let (delivered, status) = try await firstDelivery(of: outbox)
        let replayed = server.requests.last?.header("Idempotency-Key") == key
        let times = try appliedKeys(ledger).count { $0 == key }
        let same = delivered.idempotencyKey == key && replayed ? "the same key" : "ANOTHER KEY"
        let answer = times == 1 ? "the server had applied it and replayed its answer" : "the server applied it again"
        print("relaunch, delivered      \(status), sent again with \(same); \(answer): applied \(times) time\(times == 1 ? "" : "s") in all")
        await outbox.close()
    }

    /// The child: opens the outbox, enqueues an entry and delivers it to a server that records the key as applied,
    /// prints `applied KEY`, and holds the answer until the demo kills this process.
    static func runChild(_ arguments: [String]) async throws {
        guard arguments.count == 2 else { throw DemoFailure("usage: \(childFlag) FOLDER LEDGER") }
        let ledger = URL(fileURLWithPath: arguments[1])
        let server = MockServer()
        server.stub(.post, "/v1/diary") { request in
            try record(request.header("Idempotency-Key") ?? "", in: ledger)
            say("applied \(request.header("Idempotency-Key") ?? "")")
            try await Task.sleep(nanoseconds: 60_000_000_000)   // the answer never leaves: the demo kills this process
            return MockResponse(statusCode: 201)
        }
        let outbox = try await Outbox(folder: URL(fileURLWithPath: arguments[0]), provider: server.makeProvider())
        try await outbox.enqueue(SaveEntry(entry: Entry(text: "Met Ana for coffee")))
        await outbox.startDelivering()
        try await Task.sleep(nanoseconds: 60_000_000_000)
        throw DemoFailure("the child was not killed")
    }

    // MARK: Helpers

    /// The first outcome of `outbox`, which must be a delivery, within 30 s.
    private static func firstDelivery(of outbox: Outbox) async throws -> (OutboxMutation, Int) {
        try await withThrowingTaskGroup(of: (OutboxMutation, Int).self) { group in
            group.addTask {
                for await outcome in outbox.outcomes {
                    if case .delivered(let mutation, let response) = outcome { return (mutation, response.statusCode) }
                    throw DemoFailure("not delivered: \(outcome)")
                }
                throw DemoFailure("the outcomes ended")
            }
            group.addTask {
                try await Task.sleep(nanoseconds: 30_000_000_000)
                throw DemoFailure("nothing delivered in 30 s")
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw DemoFailure("no outcome") }
            return first
        }
    }

    /// The keys the demo's server applied, one a line in `ledger`.
    private static func appliedKeys(_ ledger: URL) throws -> [String] {
        guard FileManager.default.fileExists(atPath: ledger.path) else { return [] }
        return try String(contentsOf: ledger, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// Records `key` as applied in `ledger`, on disk before it returns.
    private static func record(_ key: String, in ledger: URL) throws {
        if !FileManager.default.fileExists(atPath: ledger.path) { _ = FileManager.default.createFile(atPath: ledger.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: ledger)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((key + "\n").utf8))
        try handle.synchronize()
    }

    /// Prints one line with one write(2), at once (standard output is a pipe: `print` would keep it in a buffer).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The first line `handle` gives that starts with `prefix` (a child that never prints it gives up after 60 s and
    /// exits, which ends its output).
    private static func line(from handle: FileHandle, startingWith prefix: String) async throws -> String {
        let found: String? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = ""
                while true {
                    let data = handle.availableData   // blocks; empty once the child's output ended
                    if data.isEmpty { return continuation.resume(returning: nil) }
                    buffer += String(decoding: data, as: UTF8.self)
                    if let line = buffer.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
                        return continuation.resume(returning: String(line))
                    }
                }
            }
        }
        guard let found else { throw DemoFailure("the child ended before printing '\(prefix)'") }
        return found
    }

    struct DemoFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
