import Foundation

/// What the children of one crash run printed, gathered over all their lives: which mutations were attempted
/// (`enqueuing N`: `enqueue` was called), promised (`enqueued N KEY`: `enqueue` returned that key), delivered,
/// failed for good, and which records the outbox reported damaged.
struct CrashLedger {
    /// Numbers whose `enqueue` was called.
    var attempted: Set<Int> = []
    /// Numbers whose `enqueue` returned, with the idempotency key it returned.
    var promised: [Int: String] = [:]
    /// Numbers printed as promised twice (a harness error: each number is enqueued once).
    var promisedTwice: [Int] = []
    /// Delivered outcomes printed, per number: the keys.
    var delivered: [Int: [String]] = [:]
    /// Outcomes that were not a 2xx delivery (failed for good, or delivered with another status).
    var failedOutcomes: [String] = []
    /// Damaged records the outbox reported.
    var damaged: [String] = []
    /// Lines the harness did not expect (a child's error).
    var errors: [String] = []

    /// The next number to enqueue: one past every number any child attempted.
    var next: Int { (attempted.max() ?? -1) + 1 }

    /// Reads the lines one life printed.
    mutating func read(_ lines: [String]) {
        for line in lines {
            let fields = line.split(separator: " ").map(String.init)
            guard let verb = fields.first else { continue }
            let number = fields.count > 1 ? Int(fields[1]) : nil
            switch (verb, number) {
            case ("enqueuing", let number?):
                attempted.insert(number)
            case ("enqueued", let number?) where fields.count > 2:
                if promised[number] != nil { promisedTwice.append(number) }
                promised[number] = fields[2]
            case ("delivered", let number?) where fields.count > 3:
                delivered[number, default: []].append(fields[2])
                if !fields[3].hasPrefix("2") { failedOutcomes.append(line) }
            case ("failed", _):
                failedOutcomes.append(line)
            case ("damaged", _):
                damaged.append(line)
            case ("error", _):
                errors.append(line)
            case ("done", _) where line != "done failed=0":
                failedOutcomes.append(line)
            default:
                break   // ready, enqueue-done, done: read by the driver where it needs them
            }
        }
    }

    /// Whether the last `enqueue` a life called had not returned (no `enqueued` line after its `enqueuing` line).
    static func enqueueInProgress(_ lines: [String]) -> Bool {
        guard let last = lines.lastIndex(where: { $0.hasPrefix("enqueuing ") }) else { return false }
        let number = lines[last].dropFirst("enqueuing ".count)
        return !lines[last...].contains { $0.hasPrefix("enqueued \(number) ") }
    }
}

/// SplitMix64: a small seeded generator, so that a run's kill instants repeat from its seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
