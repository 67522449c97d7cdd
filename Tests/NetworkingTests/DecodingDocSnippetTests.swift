// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/GettingStarted.md, section 4 (Decoding): keep each identical to its page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

// MARK: Docs/GettingStarted.md, 4. Decoding

struct ArchiveUser: Endpoint {
    let id: Int
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/users/\(id)/archive" }
    var method: HTTPMethod { .post }
}

struct CalendarEvent: Decodable, Sendable {
    let title: String
    let startsAt: Date
}

struct UpcomingEvents: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/events" }
    var decoder: JSONDecoder? { Self.iso8601 }

    private static let iso8601: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

struct Order: Decodable, Sendable {
    let id: Int
}

struct Dashboard: Endpoint {
    var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    var path: String { "/dashboard" }
}

@Suite("Decoding doc snippets", SuiteTimeLimit.oneMinute)
struct DecodingDocSnippetTests {
    @Test func emptyBodies() async throws {
        // GIVEN a server that archives with a 204
        let server = MockServer()
        server.stub(.post, "/v1/users/3/archive", .status(204))
        let provider = server.makeProvider()
        // WHEN the snippet runs
        let archived = try await provider.request(ArchiveUser(id: 3), as: EmptyResponse.self)   // a 204: EmptyResponse()
        let user = try await provider.request(ArchiveUser(id: 3), as: User?.self)       // a 204: nil; a body: the user
        // THEN it says what the page says
        #expect(archived == EmptyResponse())
        #expect(user == nil)
    }

    @Test func aDecoderPerEndpoint() async throws {
        // GIVEN an API with ISO-8601 dates, and a provider with the default decoder
        let server = MockServer()
        server.stub(.get, "/v1/events", .json(raw: #"[{"title":"Launch","startsAt":"2026-01-02T03:04:05Z"}]"#))
        let provider = server.makeProvider()
        // WHEN the snippet runs
        let events = try await provider.request(UpcomingEvents(), as: [CalendarEvent].self)
        // THEN the endpoint's decoder read the date
        #expect(events.map(\.startsAt) == [Date(timeIntervalSince1970: 1_767_323_045)])
    }

    @Test func decodingAtAKeyPath() async throws {
        // GIVEN the envelope the page shows
        let server = MockServer()
        server.stub(.get, "/v1/dashboard", .json(raw: #"{"status":200,"data":{"user":{"id":7,"name":"Lee"},"orders":[{"id":1},{"id":2}]}}"#))
        let provider = server.makeProvider()
        // WHEN the snippet runs
        // {"status":200,"data":{"user":{"id":7,"name":"Lee"},"orders":[{"id":1},{"id":2}]}}
        let owner = try await provider.request(Dashboard(), as: User.self, atKeyPath: "data.user")
        let orders = try await provider.request(Dashboard(), as: [Order].self, atKeyPath: "data.orders")
        // THEN each value came from inside the envelope
        #expect(owner == User(id: 7, name: "Lee"))
        #expect(orders.map(\.id) == [1, 2])
    }
}
