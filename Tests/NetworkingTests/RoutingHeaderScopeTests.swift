import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The mock's routing header is kept across hops and hidden from what a provider shows only by providers
/// whose session sends through ``MockURLProtocol``: a setting of that session, not of the process.
@Suite("The mock's routing header is per session", SuiteTimeLimit.oneMinute)
struct RoutingHeaderScopeTests {
    /// Every request a monitor is shown.
    final class Shown: EventMonitor, @unchecked Sendable {
        let requests = Recorder<URLRequest>()
        func requestDidAdapt(_ request: URLRequest, context: RequestContext) { requests.append(request) }
        func taskDidStart(_ request: URLRequest, context: RequestContext) { requests.append(request) }
    }

    struct Local: Endpoint {
        var baseURL: URL { URL(string: "http://127.0.0.1:1")! }   // nothing listens: refused at once
        var path: String { "/v1/x" }
    }

    @Test("a provider whose session does not use the mock shows a header of the mock's name, though a MockServer exists")
    func aProviderNotMadeByTheTestKitHidesNothing() async throws {
        // GIVEN a mock server in the process, and a provider of the app's own whose interceptor sets a
        // header that happens to have the mock's routing header's name
        let server = MockServer()
        server.stub(handler: { _ in .status(200) })
        let monitor = Shown()
        let provider = NetworkProvider(
            configuration: .ephemeral,
            interceptor: HeaderAdapter(name: MockURLProtocol.serverHeader, value: "app-value"), maximumAttempts: 1, deadline: 30,
            monitors: [monitor])
        // WHEN a call is made (it fails: nothing listens)
        _ = try? await provider.response(Local())
        await provider.waitForMonitors()
        // THEN its monitors were shown that header: nothing the test kit did elsewhere hid it
        #expect(!monitor.requests.all.isEmpty)
        #expect(monitor.requests.all.allSatisfy { $0.value(forHTTPHeaderField: MockURLProtocol.serverHeader) == "app-value" })
        #expect(server.requests.isEmpty)
    }

    @Test("only a session that sends through the mock keeps and hides its routing header")
    func theRoutingHeaderIsASettingOfTheSession() {
        let server = MockServer()
        let plain = NetworkProvider(configuration: .ephemeral)
        let mocked = NetworkProvider(configuration: server.makeConfiguration())
        #expect(plain.routingHeaders.isEmpty)
        #expect(mocked.routingHeaders == [MockURLProtocol.serverHeader.lowercased()])
        #expect(server.makeProvider().routingHeaders == [MockURLProtocol.serverHeader.lowercased()])
        // AND the plain provider's redirect rules strip a header of that name on the way to another origin
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/a")!)
        request.setValue("app-value", forHTTPHeaderField: MockURLProtocol.serverHeader)
        let chain = RedirectChain(attempt: request, adaptedHeaders: [], kept: plain.routingHeaders)
        guard
            case .follow(let next, _) = RedirectPolicy.decision(
                statusCode: 302, location: "https://cdn.example.net/b", current: request, chain: chain, hasBody: false, allowsInsecure: false)
        else {
            Issue.record("the redirect was not followed")
            return
        }
        #expect(next.value(forHTTPHeaderField: MockURLProtocol.serverHeader) == nil)
    }

    @Test("providers of two servers, in parallel, each reach their own server across another origin")
    func twoServersInParallelKeepTheirRoutes() async throws {
        // GIVEN two servers whose API redirects to a CDN
        let servers = [MockServer(), MockServer()]
        for (index, server) in servers.enumerated() {
            server.stub { request in
                request.url.host == "api.example.com" ? .status(302, headers: ["Location": "https://cdn.example.net/x"]) : .json(raw: "{\"s\":\(index)}")
            }
        }
        // WHEN each provider makes calls at the same time
        try await withThrowingTaskGroup(of: Void.self) { group in
            for server in servers {
                let provider = server.makeProvider()
                for call in 0..<20 {   // distinct calls: identical concurrent GETs would share an exchange
                    group.addTask { _ = try await provider.response(RedirectingEndpoint(method: .get, headers: ["X-Call": "\(call)"])) }
                }
            }
            try await group.waitForAll()
        }
        // THEN every hop reached its own server, the CDN's included
        for server in servers {
            #expect(server.requests.count == 40)
            #expect(server.requests.filter { $0.url.host == "cdn.example.net" }.count == 20)
        }
    }

    @Test("the provider's session configuration shows the additional headers it applies to each request")
    func theSessionConfigurationIsHonest() {
        // GIVEN a configuration with additional headers
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-Api-Key": "config-key"]
        let provider = NetworkProvider(configuration: configuration)
        // THEN the configuration the provider reports names them and its cache setting, while the session
        // itself carries none (the provider adds them per request, so redirects can drop them)
        #expect(provider.sessionConfiguration.httpAdditionalHeaders?["X-Api-Key"] as? String == "config-key")
        #expect(provider.sessionConfiguration.urlCache == nil)
        #expect(provider.urlSession.configuration.httpAdditionalHeaders?["X-Api-Key"] == nil)
        // AND changing the copy changes nothing in the provider
        provider.sessionConfiguration.httpAdditionalHeaders = [:]
        #expect(provider.sessionConfiguration.httpAdditionalHeaders?["X-Api-Key"] as? String == "config-key")
    }
}
