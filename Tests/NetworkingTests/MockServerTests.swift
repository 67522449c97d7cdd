import Foundation
import Networking
import Testing

@testable import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The test kit itself: bounded recordings, and the mock's way back into URLSession.
@Suite("MockServer")
struct MockServerTests {
    @Test func recordingsAreBoundedAndCanBeCleared() async throws {
        // GIVEN a server that keeps the last 10 requests
        let server = MockServer(recordingLimit: 10)
        server.stub { _ in .status(204) }
        let provider = server.makeProvider()
        // WHEN 250 requests arrive
        for index in 0..<250 { _ = try await provider.response(TestEndpoint(path: "/r/\(index)")) }
        // THEN the last 10 are kept, in order, and the rest are counted
        #expect(server.requests.map(\.path) == (240..<250).map { "/v1/r/\($0)" })
        #expect(server.droppedRecordingCount == 240)
        // and clearing forgets them but keeps the stubs
        server.clearRecordings()
        #expect(server.requests.isEmpty && server.droppedRecordingCount == 0)
        #expect(try await provider.response(TestEndpoint(path: "/again")).statusCode == 204)
        #expect(server.requests.map(\.path) == ["/v1/again"])
    }

    #if canImport(FoundationNetworking)
        @Test func theMockFindsTheTasksWorkQueueOnThisToolchain() {
            // The mock must call URLSession back on the task's private work queue (see ClientThread); if a
            // toolchain renames it, this fails here instead of the mock crashing tests at random.
            let task = URLSession(configuration: .ephemeral).dataTask(with: URL(string: "http://127.0.0.1:9/")!)
            #expect(ClientThread.workQueue(of: task) != nil)
        }
    #endif
}
