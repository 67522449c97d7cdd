// The outbox crash test's full run (issue 32), a command of its own: `IntegrationTests/outbox-crash.sh` builds and
// runs it. `OutboxCrash [--kills 100] [--mutations 500] [--seed N] [--delay-ms 10] [--pause-ms 10] [--slow-every 10] [--child PATH]
// [--folder PATH] [--verbose]`. Prints the figures and exits 1 when a promised mutation was lost or one was applied
// twice (see OutboxCrashRun for the design). The child is `OutboxCrashChild` beside this executable unless named.
import Foundation
import OutboxCrashDriver

var options: [String: String] = [:]
var verbose = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--verbose" {
        verbose = true
    } else if argument.hasPrefix("--"), let value = arguments.popFirst() {
        options[String(argument.dropFirst(2))] = value
    } else {
        let usage =
            "usage: OutboxCrash [--kills N] [--mutations N] [--seed N] [--delay-ms N] [--pause-ms N] [--slow-every N] [--child PATH] [--folder PATH] [--verbose]"
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(2)
    }
}
let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let child = options["child"].map { URL(fileURLWithPath: $0) } ?? here.appendingPathComponent("OutboxCrashChild")
let folder =
    options["folder"].map { URL(fileURLWithPath: $0) }
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("outbox-crash-\(UUID().uuidString)")
var configuration = OutboxCrashRun.Configuration(child: child, folder: folder)
if let kills = options["kills"].flatMap(Int.init) { configuration.kills = kills }
if let mutations = options["mutations"].flatMap(Int.init) { configuration.mutations = mutations }
if let seed = options["seed"].flatMap(UInt64.init) { configuration.seed = seed }
if let delay = options["delay-ms"].flatMap(Double.init) { configuration.responseDelay = delay / 1_000 }
if let pause = options["pause-ms"].flatMap(Double.init) { configuration.enqueuePause = pause / 1_000 }
if let slowEvery = options["slow-every"].flatMap(Int.init) { configuration.slowEvery = slowEvery }
if verbose { configuration.log = { print($0) } }
print("outbox crash test: seed \(configuration.seed), \(configuration.kills) kills, \(configuration.mutations) mutations, folder \(folder.path)")
let report = try await OutboxCrashRun.run(configuration)
print(report.summary)
try? FileManager.default.removeItem(at: folder)
if !report.failures.isEmpty {
    print("FAILED:\n- " + report.failures.joined(separator: "\n- "))
    exit(1)
}
