import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Secrets in URL fragments and user info, OAuth's names, and names that contain "token", "secret" or
/// "password": hidden in log lines, cURL output and `dump()`, through the real outputs.
@Suite("Secrets: URLs, OAuth names and name fragments")
struct RedactionTests {
    /// The verbose log lines, the cURL command and every rendering of the response, joined.
    func everyOutput(of request: URLRequest, responseHeaders: [String: String] = [:]) throws -> String {
        let url = try #require(request.url)
        let http = try #require(HTTPURLResponse(url: url, statusCode: 302, httpVersion: "HTTP/1.1", headerFields: responseHeaders))
        let response = Response(data: Data(), httpResponse: http, request: request)
        let lines = Recorder<String>()
        collectingLogger(lines).requestDidFinish(
            request, result: .success(response), attempts: 1, duration: 0, context: RequestContext(endpoint: TestEndpoint()))
        return lines.all.joined(separator: "\n") + "\n" + request.cURLDescription + "\n" + everyRendering(of: response)
    }

    @Test func anOAuthTokenInAURLFragmentIsHiddenWhileTheRestOfTheFragmentShows() throws {
        // GIVEN an OAuth implicit-flow redirect: tokens in the fragment of the request URL and of its Location
        let request = URLRequest(url: URL(string: "https://app.example/cb#id_token=frag-id-secret&state=state-visible")!)
        let location = "https://app.example/cb#access_token=frag-access-secret&token_type=bearer&state=xyz-visible&expires_in=3600"
        // WHEN it is logged, described as cURL and dumped
        let output = try everyOutput(of: request, responseHeaders: ["Location": location])
        // THEN the tokens are hidden, and the other pairs of the fragment still show
        expectHidden(["frag-id-secret", "frag-access-secret"], in: output)
        let showsTheRest = output.contains("state=state-visible") && output.contains("state=xyz-visible") && output.contains("expires_in=3600")
        #expect(showsTheRest)
        // and a fragment that is not name=value pairs is left as it is
        let anchor = try everyOutput(of: URLRequest(url: URL(string: "https://docs.example/guide#section-2")!))
        #expect(anchor.contains("https://docs.example/guide#section-2"))
    }

    @Test func theUserAndPasswordOfAURLAreHiddenInLogsCURLAndDumps() throws {
        // GIVEN a request URL with a user and password, and a Location header with a token as its user
        let request = URLRequest(url: URL(string: "https://user-secret:pass-secret@api.example.com/v1/users/1")!)
        let location = "https://ghp-token-secret@git.example.com/repo.git"
        // WHEN it is logged, described as cURL and dumped
        let output = try everyOutput(of: request, responseHeaders: ["Location": location])
        // THEN neither the user nor the password appears, while the hosts and paths do
        expectHidden(["user-secret", "pass-secret", "ghp-token-secret"], in: output)
        let showsTheRest = output.contains("@api.example.com/v1/users/1") && output.contains("@git.example.com/repo.git")
        #expect(showsTheRest)
    }

    @Test func oauthNamesAndNamesContainingTokenSecretOrPasswordAreHiddenButErrorCodesShow() async throws {
        // GIVEN an OAuth code exchange (a form), a JSON body with secrets deep inside beside error codes,
        // and a query with an authorization code, sent to a MockServer
        let server = MockServer()
        server.stub(.post, "/v1/token", .status(200))
        server.stub(.post, "/v1/report", .status(200))
        let form = TestEndpoint(
            path: "/token", method: .post,
            queryItems: [URLQueryItem(name: "code", value: "query-code-secret"), URLQueryItem(name: "state", value: "query-state-visible")],
            body: .form([
                URLQueryItem(name: "grant_type", value: "authorization_code"), URLQueryItem(name: "code", value: "form-code-secret"),
                URLQueryItem(name: "code_verifier", value: "form-verifier-secret"), URLQueryItem(name: "new_password", value: "form-password-secret"),
            ]))
        let json = #"""
            {"divisionCode":"E009","statusCode":400,"postcode":"SW1A","detail":{"sessionToken":"json-session-secret",
            "items":[{"jwt":"json-jwt-secret","id_token":"json-id-secret","code":"json-code-secret","code_verifier":"json-verifier-secret"}],
            "csrfToken":"json-csrf-secret","webhook_secret":"json-webhook-secret","confirmPassword":"json-confirm-secret","message":"json-message-visible"}}
            """#
        let report = TestEndpoint(
            path: "/report", method: .post, headers: ["X-CSRF-Token": "header-csrf-secret"],
            body: .data(Data(json.utf8), contentType: "application/json"))
        let provider = server.makeProvider()
        let sent = [try await provider.response(form), try await provider.response(report)]
        // WHEN the calls are logged, described as cURL and dumped, and the recorded requests dumped
        var output = ""
        for response in sent {
            output += try everyOutput(of: response.request)
        }
        output += everyRendering(of: server.requests)
        // THEN every secret is hidden
        expectHidden(
            [
                "query-code-secret", "form-code-secret", "form-verifier-secret", "form-password-secret", "json-session-secret",
                "json-jwt-secret", "json-id-secret", "json-code-secret", "json-verifier-secret", "json-csrf-secret",
                "json-webhook-secret", "json-confirm-secret", "header-csrf-secret",
            ], in: output)
        // while the error codes and harmless fields still show
        let showsTheRest =
            output.contains(#""divisionCode":"E009""#) && output.contains(#""statusCode":400"#) && output.contains(#""postcode":"SW1A""#)
            && output.contains("json-message-visible") && output.contains("query-state-visible") && output.contains("grant_type=authorization_code")
        #expect(showsTheRest)
    }
}
