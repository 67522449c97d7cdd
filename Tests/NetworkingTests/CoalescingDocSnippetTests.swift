// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Scheduling.md, "Coalescing identical calls": keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// `Profile` (a `name`) is CacheTests.swift's.

private enum ProfileAPI: Endpoint {
    case me
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/me" }
}

struct LiveScore: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/score" }
    var coalescesIdenticalCalls: Bool? { false }   // every call asks the server itself
}

@Suite("Docs/Scheduling.md coalescing snippets")
struct CoalescingDocSnippetTests {
    @Test func oneRequestForAThousandCells() async throws {
        let gate = Signal()
        let server = MockServer()
        server.stub(.get, "/v1/me") { _ in
            await gate.wait()
            return .json(raw: #"{"name":"Kim"}"#)
        }
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        Task {
            await joins.waitForJoins(999)
            gate.fire()
        }

        // 1,000 cells ask for the same profile at once: one request goes out.
        let profiles = try await withThrowingTaskGroup(of: Profile.self) { group in
            for _ in 0..<1_000 { group.addTask { try await provider.request(ProfileAPI.me, as: Profile.self) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(profiles.count == 1_000 && profiles.allSatisfy { $0.name == "Kim" })
        #expect(server.requests.count == 1)
    }

    @Test func theReportSaysACallJoined() async throws {
        let gate = Signal()
        let server = MockServer()
        server.stub(.get, "/v1/me") { _ in
            await gate.wait()
            return .json(raw: #"{"name":"Kim"}"#)
        }
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        let first = Task { try await provider.response(ProfileAPI.me) }
        let second = Task {
            let shared = try await provider.response(ProfileAPI.me)
            if shared.report.joinedExistingCall {
                print("answered by a call already in flight, after \(shared.report.duration) s")
            }
            return shared
        }
        await joins.waitForJoins(1)
        gate.fire()
        let reports = [try await first.value.report, try await second.value.report]
        #expect(reports.filter(\.joinedExistingCall).count == 1)
        #expect(server.requests.count == 1)
    }

    @Test func turningItOff() async throws {
        let provider = NetworkProvider(scheduling: Scheduling(coalescesIdenticalCalls: false))
        #expect(provider.scheduling.coalescesIdenticalCalls == false)
        #expect(LiveScore().coalescesIdenticalCalls == false)
    }
}
