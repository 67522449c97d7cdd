import Foundation
import TestServer

/// The figures of one outbox crash run, and what it found wrong (``failures``: empty when every promised mutation
/// was applied exactly once, under the key its `enqueue` returned).
public struct OutboxCrashReport: Sendable {
    /// The seed of the kill instants.
    public let seed: UInt64
    /// Mutations numbered 0..<mutations.
    public let mutations: Int
    /// Children started (killed ones and the last).
    public var lives = 0
    /// SIGKILLs sent.
    public var kills = 0
    /// Kills that landed while an `enqueue` had been called and had not been printed as returned.
    public var killsDuringEnqueue = 0
    /// Kills that landed while the server held a request it had applied and not yet answered.
    public var killsDuringDelivery = 0
    /// Kills that were both.
    public var killsDuringBoth = 0
    /// Children that had to be killed on a timeout instead of at their instant.
    public var lifeTimeouts = 0
    /// Whether the last child delivered everything and exited.
    public var finalCompleted = false
    /// Numbers whose `enqueue` was called.
    public var attempted = 0
    /// Numbers whose `enqueue` returned: the promise.
    public var promised = 0
    /// Distinct numbers the server applied.
    public var applied = 0
    /// Enqueues interrupted by a kill (called, not printed as returned) whose mutation was applied anyway, and not.
    public var unconfirmedApplied = 0
    /// See ``unconfirmedApplied``.
    public var unconfirmedNotApplied = 0
    /// Promised numbers the server never applied.
    public var lost: [Int] = []
    /// Numbers the server applied more than once (under different keys).
    public var appliedTwice: [Int] = []
    /// Promised numbers applied under another key than the one `enqueue` returned.
    public var keyChanged: [Int] = []
    /// Numbers applied that no child attempted.
    public var unexpected: [Int] = []
    /// Requests the server received.
    public var requests = 0
    /// Requests with a key the server had seen before: answered with the stored answer, or 409 while the first was
    /// in flight.
    public var replays = 0
    /// See ``replays``.
    public var conflicts = 0
    /// Requests refused for a missing key or a body that does not match its path.
    public var rejected = 0
    /// Outcomes that were not a 2xx delivery.
    public var failedOutcomes: [String] = []
    /// Damaged records the outbox reported.
    public var damagedRecords: [String] = []
    /// Harness errors (a child's error line, a child that did not complete).
    public var errors: [String] = []
    /// How long the run took.
    public var seconds: TimeInterval = 0

    init(seed: UInt64, mutations: Int) {
        self.seed = seed
        self.mutations = mutations
    }

    /// Duplicates sent: requests whose key the server had already seen.
    public var duplicatesSent: Int { replays + conflicts }

    /// What the run found wrong; empty when it proved what it should.
    public var failures: [String] {
        var failures: [String] = []
        if !lost.isEmpty { failures.append("\(lost.count) promised mutations lost: \(lost.prefix(20))") }
        if !appliedTwice.isEmpty { failures.append("\(appliedTwice.count) mutations applied twice: \(appliedTwice.prefix(20))") }
        if !keyChanged.isEmpty { failures.append("\(keyChanged.count) mutations applied under another key than enqueue returned: \(keyChanged.prefix(20))") }
        if !unexpected.isEmpty { failures.append("\(unexpected.count) mutations applied that were never enqueued: \(unexpected.prefix(20))") }
        if replays > kills { failures.append("\(replays) mutations sent again after their answer, for \(kills) kills: only one in flight at a kill may be") }
        if rejected > 0 { failures.append("\(rejected) requests without an idempotency key or with a wrong body") }
        if !failedOutcomes.isEmpty { failures.append("\(failedOutcomes.count) outcomes not delivered: \(failedOutcomes.prefix(5))") }
        if !finalCompleted { failures.append("the last child did not deliver everything") }
        if promised == 0 { failures.append("nothing was promised: the run proved nothing") }
        failures += errors.prefix(5)
        return failures
    }

    /// One paragraph with every figure.
    public var summary: String {
        "outbox crash test: seed \(seed), \(kills) kills (\(killsDuringEnqueue) during an enqueue, \(killsDuringDelivery) with a request in flight"
            + " at the server, \(killsDuringBoth) both), \(lives) processes\(lifeTimeouts > 0 ? ", \(lifeTimeouts) kills on a timeout" : "");"
            + " \(mutations) mutations: \(attempted) attempted, \(promised) promised, \(applied) applied"
            + " (interrupted enqueues: \(unconfirmedApplied) applied, \(unconfirmedNotApplied) not);"
            + " lost \(lost.count), applied twice \(appliedTwice.count), key changed \(keyChanged.count);"
            + " \(requests) requests, \(duplicatesSent) duplicates sent (\(replays) replayed, \(conflicts) 409 in flight);"
            + " \(damagedRecords.count) damaged records reported; \(String(format: "%.1f", seconds)) s"
    }

    mutating func countKill(enqueueInProgress: Bool, requestInFlight: Bool, signalled: Bool) {
        kills += 1
        if enqueueInProgress { killsDuringEnqueue += 1 }
        if requestInFlight { killsDuringDelivery += 1 }
        if enqueueInProgress, requestInFlight { killsDuringBoth += 1 }
        if !signalled { errors.append("kill \(kills): the child was not ended by the signal") }
    }

    mutating func tally(_ ledger: CrashLedger, _ server: IdempotencyLedger.Snapshot) {
        attempted = ledger.attempted.count
        promised = ledger.promised.count
        applied = server.applied.count
        lost = ledger.promised.keys.filter { server.applied[$0] == nil }.sorted()
        appliedTwice = server.applied.filter { $0.value.count > 1 }.keys.sorted()
        keyChanged = ledger.promised.filter { number, key in server.applied[number].map { !$0.contains(key) } ?? false }.keys.sorted()
        unexpected = server.applied.keys.filter { !ledger.attempted.contains($0) }.sorted()
        let unconfirmed = ledger.attempted.subtracting(ledger.promised.keys)
        unconfirmedApplied = unconfirmed.count { server.applied[$0] != nil }
        unconfirmedNotApplied = unconfirmed.count - unconfirmedApplied
        requests = server.arrivals.count
        replays = server.arrivals.count { $0.disposition == .replayed }
        conflicts = server.arrivals.count { $0.disposition == .conflict }
        rejected = server.arrivals.count { $0.disposition == .rejected }
        failedOutcomes = ledger.failedOutcomes
        damagedRecords = ledger.damaged
        errors += ledger.errors + ledger.promisedTwice.map { "number \($0) was promised twice" }
    }
}
