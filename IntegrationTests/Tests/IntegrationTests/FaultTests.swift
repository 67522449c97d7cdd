import Foundation
import Networking
import NetworkingTestSupport
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Faults over TCP", .timeLimit(.minutes(2)))
struct FaultTests {
    func transportCode(of error: any Error) -> URLError.Code? {
        if case NetworkError.transportFailed(let urlError) = error { return urlError.code }
        return nil
    }

    @Test func slowResponseBeyondTheTimeoutIsATimedOutTransportFailure() async throws {
        try await withServer { server in
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 1   // whole seconds on Linux: 0.5 times out at once
            let provider = NetworkProvider(configuration: configuration)
            let start = Date()
            await #expect {
                try await provider.response(Call(baseURL: server.baseURL, path: "/slow", queryItems: [URLQueryItem(name: "ms", value: "3000")]))
            } throws: { error in
                transportCode(of: error) == .timedOut
            }
            // Not at once (a timeout truncated to 0 fails within milliseconds); libcurl's timer may fire a
            // fraction of a millisecond early (0.99988 s was measured), so the bound leaves it room.
            #expect(Date().timeIntervalSince(start) >= 0.9)
        }
    }

    @Test func endpointTimeoutOverridesTheSession() async throws {
        try await withServer { server in
            let provider = NetworkProvider(configuration: .ephemeral)
            let call = Call(baseURL: server.baseURL, path: "/slow", queryItems: [URLQueryItem(name: "ms", value: "3000")])
            struct Timed: Endpoint {
                let call: Call
                var baseURL: URL { call.baseURL }
                var path: String { call.path }
                var queryItems: [URLQueryItem] { call.queryItems }
                var timeout: TimeInterval? { 0.5 }   // rounded up to 1 s on Linux
            }
            let start = Date()
            await #expect {
                try await provider.response(Timed(call: call))
            } throws: { error in
                transportCode(of: error) == .timedOut
            }
            #expect(Date().timeIntervalSince(start) >= 0.5)
        }
    }

    @Test func connectionClosedMidBodyIsATransportFailure() async throws {
        try await withServer { server in
            let provider = NetworkProvider(configuration: .ephemeral)
            await #expect {
                try await provider.response(Call(baseURL: server.baseURL, path: "/drop"))
            } throws: { error in
                guard let code = transportCode(of: error) else { return false }
                // Linux URLSession reports a connection closed mid-body as URLError.unknown (-1).
                return [.networkConnectionLost, .cannotParseResponse, .badServerResponse, .unknown].contains(code)
            }
        }
    }

    @Test func nothingListeningIsCannotConnect() async throws {
        let server = try await TestServer.start()
        let port = server.port
        await server.stop()
        let provider = NetworkProvider(configuration: .ephemeral)
        await #expect {
            try await provider.response(Call(baseURL: URL(string: "http://127.0.0.1:\(port)")!, path: "/echo"))
        } throws: { error in
            transportCode(of: error) == .cannotConnectToHost
        }
    }

    @Test func flapping5xxIsRetriedThenSucceeds() async throws {
        try await withServer { server in
            let delays = RecordedDelays()
            let provider = NetworkProvider(configuration: .ephemeral, interceptor: RetryPolicy(random: { 0 }), sleep: delays.sleep)
            let response = try await provider.response(
                Call(baseURL: server.baseURL, path: "/flaky/a", queryItems: [URLQueryItem(name: "failures", value: "2")]))
            #expect(response.statusCode == 200)
            #expect(delays.all == [0.5, 1.0])
            await #expect {
                try await provider.response(Call(baseURL: server.baseURL, path: "/flaky/b", queryItems: [URLQueryItem(name: "failures", value: "100")]))
            } throws: { error in
                if case NetworkError.invalidStatusCode(503) = error { return true } else { return false }
            }
        }
    }

    @Test func retryAfterIsHonoured() async throws {
        try await withServer { server in
            // with a recorded sleep: the header's value is what the provider waits
            let delays = RecordedDelays()
            let recorded = NetworkProvider(configuration: .ephemeral, interceptor: RetryPolicy(random: { 0 }), sleep: delays.sleep)
            _ = try await recorded.response(Call(baseURL: server.baseURL, path: "/ratelimited/a", queryItems: [URLQueryItem(name: "after", value: "7")]))
            #expect(delays.all == [7])
            // with the real sleep: at least that long passes (a sleep never ends early)
            let real = NetworkProvider(configuration: .ephemeral, interceptor: RetryPolicy())
            let start = Date()
            let response = try await real.response(Call(baseURL: server.baseURL, path: "/ratelimited/b", queryItems: [URLQueryItem(name: "after", value: "1")]))
            #expect(response.statusCode == 200)
            #expect(Date().timeIntervalSince(start) >= 1)
            // longer than the policy's maximum delay: not retried earlier than asked, and the delay is given
            await #expect {
                try await recorded.response(Call(baseURL: server.baseURL, path: "/ratelimited/c", queryItems: [URLQueryItem(name: "after", value: "3600")]))
            } throws: { error in
                guard case NetworkError.retryAfter(seconds: 3600, statusCode: 429) = error else { return false }
                return true
            }
            #expect(delays.all == [7])
        }
    }

    @Test func gzipBodiesAreDecoded() async throws {
        try await withServer { server in
            struct Document: Decodable {
                struct Entry: Decodable {
                    let id: Int
                    let name: String
                }
                let items: [Entry]
            }
            let document = try await NetworkProvider(configuration: .ephemeral).request(Call(baseURL: server.baseURL, path: "/gzip"), as: Document.self)
            #expect(document.items.count == GzipFixture.itemCount)
            #expect(document.items.last?.name == "item 199")
        }
    }

    @Test func largeBodiesArriveWhole() async throws {
        try await withServer { server in
            let response = try await NetworkProvider(configuration: .ephemeral).response(
                Call(baseURL: server.baseURL, path: "/large", queryItems: [URLQueryItem(name: "mb", value: "24")]))
            #expect(response.data.count == 24 << 20)
            #expect(response.data.allSatisfy { $0 == UInt8(ascii: "x") })
        }
    }

    @Test func echoSeesMethodQueryHeadersAndBody() async throws {
        try await withServer { server in
            let provider = NetworkProvider(configuration: .ephemeral)
            let echo = try await provider.request(
                Call(
                    baseURL: server.baseURL, path: "/echo", method: .put, headers: ["X-Trace": "t-1"],
                    queryItems: [URLQueryItem(name: "q", value: "a+b & c=d 한")],
                    body: .json(["name": "Kim"])), as: Echo.self)
            #expect(echo.method == "PUT")
            #expect(echo.query["q"] == "a+b & c=d 한")
            #expect(echo.headers.first { $0.key.lowercased() == "x-trace" }?.value == "t-1")
            #expect(echo.body == #"{"name":"Kim"}"#)
        }
    }
}
