// swift-format-ignore-file
// (Twins of the snippets in Docs/ are kept identical to the pages, so the formatter leaves this file alone.)
// Twins of the snippets in Docs/Limits.md: keep each identical to the page.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Networking
import NetworkingTestSupport
import Testing

struct UploadAvatar: Endpoint {
    let image: Data
    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String { "/me/avatar" }
    var method: HTTPMethod { .put }
    var body: RequestBody { .data(image, contentType: "image/jpeg") }
    var deadline: TimeInterval? { 300 }                 // this call may take 5 minutes
    var maximumResponseSize: Int? { 64 * 1_024 }        // and its answer is small
}

func limitsProvider() -> NetworkProvider {
    let provider = NetworkProvider(deadline: 30, maximumResponseSize: 8 * 1_024 * 1_024)   // everything else: 30 s, 8 MiB
    return provider
}

/// The page's `do`/`catch`, returning what it printed.
func describeFailure(of endpoint: some Endpoint, through provider: NetworkProvider) async throws -> String {
    var printed = ""
    func print(_ text: String) { printed = text }
    do {
        _ = try await provider.response(endpoint)
    } catch NetworkError.invalidRequest(let field, let reason) {
        print("not sent: \(field) \(reason)")               // never prints the value itself
    } catch NetworkError.deadlineExceeded(let seconds) {
        print("gave up after \(seconds) s")
    } catch NetworkError.responseTooLarge(let limit) {
        print("answer over \(limit) bytes")
    }
    return printed
}

@Suite("Limits doc snippets")
struct LimitsDocSnippetTests {
    @Test func theProviderAndEndpointCarryTheirLimits() {
        let provider = limitsProvider()
        #expect(provider.deadline == 30 && provider.maximumResponseSize == 8 * 1_024 * 1_024)
        let upload = UploadAvatar(image: Data([0xFF, 0xD8]))
        #expect(upload.deadline == 300 && upload.maximumResponseSize == 65_536)
    }

    @Test func theCatchClausesSayWhatHappenedWithoutTheValue() async throws {
        let server = MockServer()
        server.stub(.put, "/v1/me/avatar", MockResponse(body: Data(count: 100_000)))
        let provider = server.makeProvider()
        #expect(try await describeFailure(of: UploadAvatar(image: Data([1])), through: provider) == "answer over 65536 bytes")
        let leaky = TestEndpoint(headers: ["X-Api-Key": "k3y\r\nX-Evil: 1"])
        let text = try await describeFailure(of: leaky, through: provider)
        #expect(text.hasPrefix("not sent: value of header \"X-Api-Key\"") && !text.contains("k3y"))
    }
}
