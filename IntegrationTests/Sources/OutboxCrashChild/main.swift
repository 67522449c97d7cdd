// The process the outbox crash test kills (OutboxCrashRun): `OutboxCrashChild FOLDER BASE-URL FIRST END PAUSE-MS`.
// Opens the Outbox in FOLDER (resuming what a killed child left there), starts delivering, then enqueues the
// mutations FIRST..<END: each `POST BASE-URL/outbox/apply/N` with the JSON body {"n": N}, PAUSE-MS apart. It
// prints, each with one write(2) so that a line is whole or absent when the process is killed:
//   ready pending=P               the outbox opened with P stored mutations
//   enqueuing N                   before `enqueue` is called for N
//   enqueued N KEY                after it returned (the promise), with the idempotency key it made
//   enqueue-done                  every mutation was enqueued
//   delivered N KEY STATUS        an outcome: delivered with that response
//   failed N KEY ERROR            an outcome: failed for good
//   damaged DESCRIPTION           an outcome: a damaged record skipped
//   (a discarded mutation is printed as failed)
//   done failed=F                 nothing is pending any more; the outbox was closed
//   error DESCRIPTION             something the harness did not expect (exit 1)
import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `POST /outbox/apply/{n}` with `{"n": n}`: one numbered mutation.
struct Apply: Endpoint {
    let baseURL: URL
    let number: Int
    var path: String { "/outbox/apply/\(number)" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["n": number]) }
    var requiresAuthentication: Bool { false }
}

/// Prints one line with a single write(2): whole, or not at all when the process is killed.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// The number in a mutation's URL (`/outbox/apply/N`).
func number(of mutation: OutboxMutation) -> String {
    mutation.url.lastPathComponent
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let base = URL(string: arguments[2]), let first = Int(arguments[3]), let end = Int(arguments[4]),
    let pause = UInt32(arguments[5])
else {
    say("error usage: OutboxCrashChild FOLDER BASE-URL FIRST END PAUSE-MS")
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[1])

do {
    // A 409 (the server still holds the killed child's request with the same key) is tried again: after 50 ms here
    // rather than the default backoff's 1 s, to keep the run short.
    let outbox = try await Outbox(
        folder: folder, provider: NetworkProvider(configuration: .ephemeral), configuration: OutboxConfiguration(retryDelay: { _ in 0.05 }))
    say("ready pending=\(await outbox.pending.count)")
    let reporter = Task {
        for await outcome in outbox.outcomes {
            switch outcome {
            case .delivered(let mutation, let response):
                say("delivered \(number(of: mutation)) \(mutation.idempotencyKey) \(response.statusCode)")
            case .failed(let mutation, let error):
                say("failed \(number(of: mutation)) \(mutation.idempotencyKey) \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
            case .discarded(let mutation, let reason):
                say("failed \(number(of: mutation)) \(mutation.idempotencyKey) discarded: \(reason)")
            case .damagedRecord(let record):
                say("damaged \(record.description.replacingOccurrences(of: "\n", with: " "))")
            case .outcomesDropped(let count):
                say("dropped \(count)")
            }
        }
    }
    await outbox.startDelivering()
    for n in first..<max(first, end) {
        say("enqueuing \(n)")
        let mutation = try await outbox.enqueue(Apply(baseURL: base, number: n))
        say("enqueued \(n) \(mutation.idempotencyKey)")
        if pause > 0 { usleep(pause * 1_000) }
    }
    say("enqueue-done")
    while await !outbox.pending.isEmpty {
        try await Task.sleep(nanoseconds: 5_000_000)
    }
    let failed = await outbox.failed.count
    await outbox.close()
    reporter.cancel()
    say("done failed=\(failed)")
} catch {
    say("error \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
    exit(1)
}
