// `swift run networking-demo`: the package's story, told with no server. A MockServer answers
// every request in-process, so what is printed is what the real pipeline did.
import Foundation

do {
    try await CoreDemo.run()
    try await AuthDemo.run()
    try await RedirectDemo.run()
    try await CacheDemo.run()
    try await OfflineDemo.run()
    try await TransferDemo.run()
    try await BackgroundTransferDemo.run()
} catch {
    print("demo failed: \(error)")
    exit(1)
}
