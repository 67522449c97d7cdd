import Foundation
import TestServer

/// The outbox crash test (issue 32): a child process (`OutboxCrashChild`) enqueues numbered mutations into an
/// `Outbox` on a folder and delivers them to an ``OutboxServer`` over TCP; the driver kills it with SIGKILL at
/// random instants, during an enqueue and while a request is in flight, and starts a fresh child on the same
/// folder each time; a last child runs to completion. Then it checks, against the server's ledger:
/// every mutation whose `enqueue` returned (promised) was applied, none was applied twice, each under the key
/// its `enqueue` returned.
///
/// How the driver knows what was promised: a child prints `enqueuing N` (one `write`) before it calls `enqueue`
/// and `enqueued N KEY` after it returned; the driver reads every line a child wrote, even after killing it. The
/// next child starts one past the highest number attempted, so no number is ever enqueued twice: a mutation
/// whose `enqueue` was interrupted is not promised, and may or may not be applied (once).
///
/// Kill instants (a seeded generator): in turn at random, (E) right after a child printed its k-th
/// `enqueuing` line (k in 1...5) plus 0–2 ms, or (D) right after the server received the m-th request of that life
/// (m in 1...4) plus 0 to the response delay + 2 ms. A killed life enqueues with a pause between mutations
/// (`enqueuePause`), so that both kinds land throughout the run; the last child does not pause. Every `slowEvery`-th
/// mutation the server applies takes `slowDelay` to answer, longer than a new child takes to start and send it
/// again: that resend meets the first still in flight (409, tried again later).
///
/// Besides the promise it checks that the server replayed a stored answer at most once per kill: with one mutation
/// in flight at a time, only the one in flight at a kill may be sent again after it was applied.
public enum OutboxCrashRun {
    /// What to run.
    public struct Configuration: Sendable {
        /// The `OutboxCrashChild` executable.
        public var child: URL
        /// The outbox's folder (emptied first).
        public var folder: URL
        /// SIGKILLs before the last child.
        public var kills = 100
        /// Mutations numbered 0..<mutations.
        public var mutations = 500
        /// The seed of the kill instants.
        public var seed: UInt64 = UInt64.random(in: 1...UInt64.max)
        /// How long the server takes to answer a first request, after applying it.
        public var responseDelay: TimeInterval = 0.01
        /// Every how many applied mutations one takes ``slowDelay`` to answer (0: none), so that a new child sends it
        /// again while the first request is still in flight (409).
        public var slowEvery = 10
        /// See ``slowEvery``.
        public var slowDelay: TimeInterval = 0.3
        /// The pause between two enqueues in a killed life.
        public var enqueuePause: TimeInterval = 0.01
        /// The longest a killed life may wait for its kill instant before it is killed anyway.
        public var lifeTimeout: TimeInterval = 60
        /// The longest the last child may take to deliver everything.
        public var finalTimeout: TimeInterval = 600
        /// Progress lines.
        public var log: @Sendable (String) -> Void = { _ in }

        /// A run of `child` on `folder`.
        public init(child: URL, folder: URL) {
            self.child = child
            self.folder = folder
        }
    }

    /// Runs the crash test; throws only when the harness itself cannot run (a child or the server does not start).
    public static func run(_ configuration: Configuration) async throws -> OutboxCrashReport {
        let started = Date()
        try? FileManager.default.removeItem(at: configuration.folder)
        try FileManager.default.createDirectory(at: configuration.folder, withIntermediateDirectories: true)
        let server = try await OutboxServer.start(
            responseDelay: configuration.responseDelay, slowEvery: configuration.slowEvery, slowDelay: configuration.slowDelay)
        var report = OutboxCrashReport(seed: configuration.seed, mutations: configuration.mutations)
        var ledger = CrashLedger()
        var generator = SeededGenerator(seed: configuration.seed)
        let pause = String(Int(configuration.enqueuePause * 1_000))
        do {
            while report.kills < configuration.kills, ledger.errors.isEmpty {
                let first = ledger.next
                let child = try ChildProcess(
                    configuration.child,
                    [configuration.folder.path, server.baseURL.absoluteString, String(first), String(configuration.mutations), pause])
                report.lives += 1
                let requestsBefore = server.ledger.requestCount
                var enqueueKill = first < configuration.mutations && Bool.random(using: &generator)
                let k = Int.random(in: 1...5, using: &generator)
                let m = Int.random(in: 1...4, using: &generator)
                let lifeStarted = Date()
                var endedByItself = false
                // Wait for the kill instant.
                while true {
                    let (lines, ended) = child.output
                    if ended {
                        endedByItself = true
                        break
                    }
                    if enqueueKill, lines.contains("enqueue-done") { enqueueKill = false }
                    if enqueueKill, lines.count(where: { $0.hasPrefix("enqueuing ") }) >= k { break }
                    if !enqueueKill, server.ledger.requestCount - requestsBefore >= m { break }
                    if Date().timeIntervalSince(lifeStarted) > configuration.lifeTimeout {
                        report.lifeTimeouts += 1
                        break
                    }
                    usleep(200)
                }
                if !endedByItself {
                    let limit = enqueueKill ? 2_000 : Int(configuration.responseDelay * 1e6) + 2_000
                    usleep(UInt32(Int.random(in: 0..<limit, using: &generator)))
                    let inFlight = server.ledger.inFlightCount > 0
                    child.kill()
                    let outcome = await child.wait(timeout: 30)
                    let lines = child.output.lines
                    let enqueuing = CrashLedger.enqueueInProgress(lines)
                    report.countKill(enqueueInProgress: enqueuing, requestInFlight: inFlight, signalled: outcome.signalled)
                    ledger.read(lines)
                    configuration.log(
                        "life \(report.lives): kill \(report.kills) (\(enqueueKill ? "E" : "D")) from \(first): \(lines.count) lines"
                            + "\(enqueuing ? ", an enqueue in progress" : "")\(inFlight ? ", a request in flight" : ""); next \(ledger.next)")
                } else {
                    // It ran out of work before its kill instant: the run is too short for the kills asked.
                    let outcome = await child.wait(timeout: 30)
                    ledger.read(child.output.lines)
                    if outcome.status != 0 || outcome.signalled { ledger.errors.append("a child exited with \(outcome.status): \(child.standardError)") }
                    configuration.log("life \(report.lives): ended by itself before its kill")
                    break
                }
            }
            // The last child: resumes what is stored, enqueues the rest without pausing, delivers everything.
            let child = try ChildProcess(
                configuration.child,
                [configuration.folder.path, server.baseURL.absoluteString, String(ledger.next), String(configuration.mutations), "0"])
            report.lives += 1
            let outcome = await child.wait(timeout: configuration.finalTimeout)
            let lines = child.output.lines
            ledger.read(lines)
            report.finalCompleted = outcome.status == 0 && !outcome.signalled && lines.contains { $0.hasPrefix("done") }
            if !report.finalCompleted {
                ledger.errors.append("the last child did not complete (status \(outcome.status), timed out: \(outcome.timedOut)): \(child.standardError)")
            }
            configuration.log("last life: \(lines.last ?? "no output")")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        report.tally(ledger, server.ledger.snapshot)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}
