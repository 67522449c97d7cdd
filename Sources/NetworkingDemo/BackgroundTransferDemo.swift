import Foundation
import Networking
import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A background upload that outlives its app: started, the app terminated while the "system" finishes
/// it, and its outcome handed out at the next launch, on the simulated system (Linux has no background
/// sessions; on iOS the same service runs on a background URLSession).
enum BackgroundTransferDemo {
    struct VideoAPI: Endpoint {
        let file: URL
        var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
        var path: String { "/videos" }
        var method: HTTPMethod { .post }
        var body: RequestBody { .file(file, contentType: "video/mp4") }
    }

    static func run() async throws {
        print("== A background upload that outlives its app")
        let server = MockServer()
        server.stub(.post, "/v1/videos") { request in
            print("server   received \(request.body.count) bytes while the app was gone")
            return MockResponse(statusCode: 201, body: Data(#"{"id":"v42"}"#.utf8))
        }
        let system = SimulatedBackgroundSystem(server: server)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("networking-demo-bg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: folder)   // the demo's scratch folders
            try? FileManager.default.removeItem(at: system.folder)
        }
        let video = folder.appendingPathComponent("holiday.mp4")
        try Data(repeating: 0x42, count: 500_000).write(to: video)
        let identifier = "com.example.demo.transfers"

        // Launch 1: the app starts the upload, and is then suspended and terminated.
        let first = try BackgroundTransferService(session: system.launch(identifier: identifier), folder: folder.appendingPathComponent("transfers"))
        try await first.start()
        let record = try await first.upload(VideoAPI(file: video), tag: "holiday")
        print("launch 1 recorded \(record.endpoint) (tag \(record.tag)), then the app was terminated")
        system.terminateApp()
        await first.stop()

        await system.runAll()   // the system goes on without the app

        // Launch 2: the system relaunches the app in the background; the outcome arrives as a value.
        let second = try BackgroundTransferService(session: system.launch(identifier: identifier), folder: folder.appendingPathComponent("transfers"))
        let (handlerCalls, handlerCalled) = AsyncStream.makeStream(of: Void.self)
        second.handleEventsForBackgroundURLSession(identifier: identifier) {   // what the app delegate hands over
            print("launch 2 completion handler called, after the events")
            handlerCalled.yield()
        }
        try await second.start()
        for await outcome in second.outcomes {
            switch outcome {
            case .finished(let record, let response):
                print("launch 2 \(record.tag): \(response.statusCode) \(String(decoding: response.body, as: UTF8.self))")
            case .failed(let record, let error):
                print("launch 2 \(record.tag): failed, \(error)")
            case .unreadableRecord(let issue):
                print("launch 2 \(issue)")
            }
            await second.acknowledge(outcome)   // applied: its record goes; unacknowledged, the next launch tells it again
            if await second.pendingTransfers.isEmpty { break }
        }
        for await _ in handlerCalls { break }
        await second.stop()
        print()
    }
}
