// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Scheduling.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct Thumbnail: Endpoint {
    let id: Int
    var baseURL: URL { URL(string: "https://images.example.com")! }
    var path: String { "/thumbnails/\(id)" }
    var priority: RequestPriority { .low }   // prefetching: behind what the user waits for
}

@Suite("Docs/Scheduling.md snippets")
struct SchedulingDocSnippetTests {
    @Test func limits() {
        let provider = NetworkProvider(scheduling: Scheduling(maximumCalls: 32, maximumCallsPerHost: 4))
        #expect(provider.scheduling.maximumCalls == 32 && provider.scheduling.maximumCallsPerHost == 4)
        #expect(NetworkProvider().scheduling == .default)
        #expect(Scheduling.default.maximumCalls == 64 && Scheduling.default.maximumCallsPerHost == 6)
        #expect(Scheduling(maximumCalls: 0, maximumCallsPerHost: -1) == Scheduling(maximumCalls: 1, maximumCallsPerHost: 1))
    }

    @Test func priorities() {
        #expect(Thumbnail(id: 7).priority == .low)
    }

    @Test func cancellation() async throws {
        let server = MockServer()
        server.stub(.get, "/thumbnails/7", MockResponse.status(200).delayed(by: .infinity))
        let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 1), configuration: server.makeConfiguration(basedOn: .ephemeral))
        let call = Task { try await provider.response(Thumbnail(id: 7)) }
        call.cancel()   // queued or not, it ends now with NetworkError.cancelled
        await #expect(throws: NetworkError.cancelled) { try await call.value }
    }

    @Test func seeingTheQueue() async throws {
        let server = MockServer()
        server.stub(.get, "/thumbnails/7", .status(200))
        let provider = NetworkProvider(scheduling: Scheduling(maximumCallsPerHost: 1), configuration: server.makeConfiguration(basedOn: .ephemeral))
        let response = try await provider.response(Thumbnail(id: 7))
        print(response.report.queueWait)   // 0.8: seconds its requests waited for a slot, part of its duration
        #expect(response.report.queueWait == 0)   // nothing else was in flight
        #expect(response.report.queueWait <= response.report.duration)
    }
}
