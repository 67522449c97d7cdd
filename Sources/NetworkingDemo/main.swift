// `swift run networking-demo`: the package's story, told with no server. A MockServer answers
// every request in-process, so what is printed is what the real pipeline did.
import Foundation

// The outbox section runs the demo again as a child process that it kills (OutboxDemo).
if let flag = CommandLine.arguments.firstIndex(of: OutboxDemo.childFlag) {
    do {
        try await OutboxDemo.runChild(Array(CommandLine.arguments[(flag + 1)...]))
    } catch {
        print("outbox demo child failed: \(error)")
        exit(1)
    }
    exit(0)
}

do {
    try await CoreDemo.run()
    try await AuthDemo.run()
    try await RedirectDemo.run()
    try await SchedulingDemo.run()
    try await CacheDemo.run()
    try await OfflineDemo.run()
    try await OutboxDemo.run()
    try await TransferDemo.run()
    try await BackgroundTransferDemo.run()
} catch {
    print("demo failed: \(error)")
    exit(1)
}
