import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything `dump`, `print`, `debugPrint` and string interpolation make of `value`.
func everyRendering(of value: Any) -> String {
    var dumped = ""
    dump(value, to: &dumped)
    return [dumped, String(describing: value), String(reflecting: value), "\(value)"].joined(separator: "\n")
}

/// Records an issue for each of `secrets` that `text` contains, naming only its position in the list:
/// a failure never prints the secret or the text around it.
func expectHidden(_ secrets: [String], in text: String, _ what: String = "output", sourceLocation: SourceLocation = #_sourceLocation) {
    for (index, secret) in secrets.enumerated() where text.contains(secret) {
        Issue.record("\(what) shows secret #\(index)", sourceLocation: sourceLocation)
    }
}

/// A sink that keeps the lines a logger writes.
func collectingLogger(_ lines: Recorder<String>, redactor: Redactor = Redactor()) -> NetworkLogger {
    NetworkLogger(verbosity: .verbose, redactor: redactor, sink: LogSink { lines.append($0) })
}

/// A response to `request` with the given status and headers.
private func response(to request: URLRequest, status: Int = 200, headers: [String: String] = [:], body: String = "") -> Response {
    let http = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
    return Response(data: Data(body.utf8), httpResponse: http, request: request)
}

// MARK: Item 12: the AuthInterceptor's header is redacted without the app registering it

@Suite("Secrets: the auth header is redacted by default")
struct AuthHeaderRedactionTests {
    @Test func aCustomAuthHeaderIsHiddenInLogsAndCURLWithoutBeingRegistered() async throws {
        // GIVEN a logger made before an AuthInterceptor whose header has a name no list contains
        let token = "tok-12-custom-\(UUID().uuidString)"
        let headerName = "X-Unlisted-Auth-\(UUID().uuidString.prefix(8))"   // no "token", "secret" or "password" in it
        let lines = Recorder<String>()
        let logger = collectingLogger(lines)
        #expect(!Redactor().hidesHeader(headerName))
        let auth = AuthInterceptor(
            baseURL: URL(string: "https://api.example.com/v1")!,
            header: AuthorizationHeader(name: headerName)
        ) { credential, _ in credential }
        try await auth.signIn(with: Credential(accessToken: token, refreshToken: "refresh-12"))
        // WHEN the interceptor authenticates a request, which is then logged and described
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(User(id: 1, name: "Kim")))
        let sent = try await server.makeProvider(interceptor: auth).response(TestEndpoint())
        let sentTheToken = sent.request.value(forHTTPHeaderField: headerName) == token
        #expect(sentTheToken)   // the header was really sent
        logger.requestDidFinish(sent.request, result: .success(sent), attempts: 1, duration: 0.01, context: RequestContext(endpoint: TestEndpoint()))
        let output = lines.all.joined(separator: "\n") + sent.request.cURLDescription + everyRendering(of: sent)
        // THEN the token appears nowhere, in any letter case of the name, while the name does
        expectHidden([token], in: output)
        let namesTheHeader = output.lowercased().contains("\(headerName.lowercased()): <redacted>")
        #expect(namesTheHeader)
        #expect(Redactor().hidesHeader(headerName.uppercased()) && logger.redactor.hidesHeader(headerName.lowercased()))
    }

    @Test func theDocsAccessTokenHeaderIsHiddenByDefault() throws {
        // GIVEN a request with the raw-token header the Authentication guide shows
        var request = try TestEndpoint().urlRequest()
        request.setValue("raw-doc-token", forHTTPHeaderField: "accessToken")
        let lines = Recorder<String>()
        // WHEN it is logged verbosely and described as cURL by default redactors
        collectingLogger(lines).requestDidFinish(
            request, result: .success(response(to: request)), attempts: 1, duration: 0,
            context: RequestContext(endpoint: TestEndpoint()))
        let output = lines.all.joined(separator: "\n") + request.cURLDescription
        // THEN the token is hidden
        expectHidden(["raw-doc-token"], in: output)
        let namesTheHeader = output.lowercased().contains("accesstoken: <redacted>")
        #expect(namesTheHeader)
    }

    @Test func theRegistryIsCaseInsensitiveAndShared() {
        // GIVEN a name registered the way the interceptor registers its header
        let name = "X-Registry-\(UUID().uuidString)"
        #expect(!SecretHeaderNames.contains(name))
        SecretHeaderNames.register(name)
        // THEN every redactor, with any sets, hides it in any letter case
        #expect(SecretHeaderNames.contains(name.lowercased()))
        #expect(Redactor(headerNames: [], bodyKeys: [], queryNames: []).hidesHeader(name.uppercased()))
    }
}

// MARK: Item 13: common secret names, in headers, query items and bodies

@Suite("Secrets: default redaction")
struct DefaultRedactionTests {
    static let headerNames = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token"]
    static let secretNames = [
        "token", "access_token", "accessToken", "refresh_token", "refreshToken", "id_token",
        "password", "secret", "client_secret", "api_key", "apiKey", "sessionToken", "jwt", "code", "code_verifier",
    ]

    @Test("secret headers are hidden in any letter case", arguments: headerNames + secretNames)
    func header(name: String) throws {
        // GIVEN a request carrying the header, with its name in three spellings
        for spelling in [name, name.uppercased(), name.lowercased()] {
            var request = try TestEndpoint().urlRequest()
            request.setValue("hdr-secret-value", forHTTPHeaderField: spelling)
            // WHEN it is described as cURL
            let curl = request.cURLDescription
            // THEN the value is hidden
            expectHidden(["hdr-secret-value"], in: curl, "cURL with header \(spelling)")
            #expect(Redactor().hidesHeader(spelling))
        }
    }

    @Test("secret fields are hidden in query items, nested JSON and form bodies", arguments: secretNames)
    func field(name: String) throws {
        let redactor = Redactor()
        for spelling in [name, name.uppercased()] {
            // GIVEN the field in a query, deep in JSON objects and arrays, and in a form
            let url = URL(string: "https://api.example.com/v1/x?page=2&\(spelling)=query-secret-value")!
            let json = #"{"page":2,"outer":{"list":[{"\#(spelling)":"json-secret-value","keep":"visible"}]}}"#
            let form = "page=2&\(spelling)=form-secret-value"
            // WHEN each is redacted
            let shownURL = redactor.url(url)
            let shownJSON = redactor.body(Data(json.utf8), contentType: "application/json")
            let shownForm = redactor.body(Data(form.utf8), contentType: "application/x-www-form-urlencoded")
            // THEN the secret is gone and the harmless parts stay
            expectHidden(["query-secret-value"], in: shownURL, "query \(spelling)")
            expectHidden(["json-secret-value"], in: shownJSON, "JSON \(spelling)")
            expectHidden(["form-secret-value"], in: shownForm, "form \(spelling)")
            let keepsTheRest = shownURL.contains("page=2") && shownJSON.contains("visible") && shownForm.contains("page=2")
            #expect(keepsTheRest, "\(spelling)")
        }
    }

    @Test func anAppAddsItsOwnNames() throws {
        // GIVEN names no default contains
        var redactor = Redactor()
        redactor.headerNames.insert("X-Session")
        redactor.bodyKeys.insert("pin")
        redactor.queryNames.insert("otp")
        #expect(!Redactor().hidesHeader("X-Session"))
        // WHEN a request using them is described
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/pay?otp=sig-secret")!)
        request.httpMethod = "POST"
        request.setValue("session-secret", forHTTPHeaderField: "x-session")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"pin":"pin-secret","amount":5}"#.utf8)
        let curl = request.cURLDescription(redactor: redactor)
        // THEN all three are hidden
        expectHidden(["sig-secret", "session-secret", "pin-secret"], in: curl)
        let keepsTheRest = curl.contains("\"amount\":5")
        #expect(keepsTheRest)
    }

    @Test func presignedURLsSignaturesAreHiddenByDefault() {
        // GIVEN presigned URLs of S3, Google Cloud Storage, Azure and CloudFront, and an API key in a query
        let urls = [
            (
                "https://b.s3.amazonaws.com/f.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA-secret-1"
                    + "&X-Amz-Signature=ab12-secret-2&X-Amz-Expires=900", "X-Amz-Expires=900"
            ),
            (
                "https://storage.googleapis.com/b/f?X-Goog-Credential=svc-secret-3&X-Goog-Signature=ff00-secret-4&X-Goog-Expires=900",
                "X-Goog-Expires=900"
            ),
            ("https://a.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-12-01&sig=azure-secret-5", "sv=2022-11-02"),
            ("https://d1.cloudfront.net/f?Policy=policy-secret-6&Signature=cf-secret-7&Key-Pair-Id=kp-secret-8&v=3", "v=3"),
            ("https://maps.example.com/v1/geo?key=AIza-secret-9&q=paris", "q=paris"),
        ]
        for (text, harmless) in urls {
            // WHEN a default redactor shows them (logs, cURL, dump)
            let shown = Redactor().url(URL(string: text)!)
            // THEN no signature, credential or key is readable, and the harmless parameters stay
            expectHidden((1...9).map { "secret-\($0)" }, in: shown, text)
            #expect(shown.contains(harmless), "\(shown)")
        }
    }

    @Test func urlValuedHeadersAndURLPasswordsAreRedacted() {
        // GIVEN a redirect's Location with a token, and a URL with a user and password
        let redactor = Redactor()
        // WHEN they are shown
        let location = redactor.headerValue("https://cdn.example.net/f?token=loc-secret&size=2", forName: "location")
        let withPassword = redactor.url(URL(string: "https://kim:pw-secret@api.example.com/v1")!)
        // THEN the secrets are replaced
        expectHidden(["loc-secret", "pw-secret"], in: location + withPassword)
        let keepsTheRest =
            location.contains("size=2") && withPassword == "https://%3Credacted%3E:%3Credacted%3E@api.example.com/v1"
        #expect(keepsTheRest)
    }
}

// MARK: Item 14: dump and descriptions show no secret

@Suite("Secrets: dump and descriptions")
struct DumpSafetyTests {
    static let secrets = [
        "Bearer bearer-14-secret", "api-14-secret", "cookie-14-secret", "query-14-secret",
        "set-cookie-14-secret", "location-14-secret", "body-14-secret", "password-14-secret",
    ]

    func secretResponse() -> Response {
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/sign-in?token=query-14-secret")!)
        request.httpMethod = "POST"
        request.setValue("Bearer bearer-14-secret", forHTTPHeaderField: "Authorization")
        request.setValue("api-14-secret", forHTTPHeaderField: "X-Api-Key")
        request.setValue("id=cookie-14-secret", forHTTPHeaderField: "Cookie")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"password":"password-14-secret"}"#.utf8)
        return response(
            to: request,
            headers: [
                "Set-Cookie": "session=set-cookie-14-secret",
                "Location": "https://api.example.com/next?token=location-14-secret",
                "Content-Type": "application/json",
            ], body: #"{"accessToken":"body-14-secret"}"#)
    }

    @Test func aResponseShowsNoSecret() {
        // GIVEN a response whose request and headers are full of secrets
        let response = secretResponse()
        // WHEN it is dumped, printed and debug-printed
        let text = everyRendering(of: response) + everyRendering(of: [response]) + everyRendering(of: Optional(response) as Any)
        // THEN no secret appears, while status, URL, header names and size do
        expectHidden(Self.secrets, in: text)
        let showsTheShape =
            text.contains("200") && text.contains("https://api.example.com/v1/sign-in")
            && text.contains("Set-Cookie: <redacted>") && text.lowercased().contains("x-api-key: <redacted>")
            && text.contains("\(response.data.count) bytes")
        #expect(showsTheShape)
        // and the values are still there for code that reads them
        let keepsTheValue = response.request.value(forHTTPHeaderField: "Authorization") == "Bearer bearer-14-secret"
        #expect(keepsTheValue)
    }

    @Test func aResultOrRetryHoldingAResponseShowsNoSecret() {
        // GIVEN values that wrap a response the way monitors and retriers see it
        struct APIError: Error { let response: Response }
        let response = secretResponse()
        let wrapped: [Any] = [
            Result<Response, any Error>.success(response),
            RetryResult.doNotRetryWithError(APIError(response: response)),
            NetworkError.tooManyAttempts(2, lastError: APIError(response: response)),
        ]
        // WHEN each is dumped and printed
        let text = wrapped.map(everyRendering(of:)).joined()
        // THEN no secret appears
        expectHidden(Self.secrets, in: text)
    }

    @Test func aRecordedRequestShowsNoSecretButKeepsItsValues() async throws {
        // GIVEN a request with secrets that a MockServer received
        let server = MockServer()
        server.stub(.post, "/v1/users/1", .status(204))
        struct SignIn: Encodable, Sendable {
            let email: String
            let password: String
        }
        _ = try await server.makeProvider().response(
            TestEndpoint(
                method: .post, headers: ["Authorization": "Bearer bearer-14-secret", "X-Api-Key": "api-14-secret"],
                queryItems: [URLQueryItem(name: "token", value: "query-14-secret")],
                body: .json(SignIn(email: "kim@example.com", password: "password-14-secret"))
            ))
        let recorded = try #require(server.requests.first)
        // WHEN it is dumped and printed
        let text = everyRendering(of: recorded) + everyRendering(of: server.requests)
        // THEN no secret appears
        expectHidden(Self.secrets, in: text)
        let showsTheShape = text.contains("POST") && text.contains("/v1/users/1") && text.contains("Authorization: <redacted>")
        #expect(showsTheShape)
        // while a test still reads every value
        let keepsTheValues = recorded.header("authorization") == "Bearer bearer-14-secret" && recorded.query("token") == "query-14-secret"
        #expect(keepsTheValues)
        let bodyKept = String(decoding: recorded.body, as: UTF8.self).contains("password-14-secret")
        #expect(bodyKept)
    }

    @Test func networkErrorsShowNoSecret() throws {
        // GIVEN errors carrying a failing URL with a token and a value that failed to encode
        let failingURL = URL(string: "https://api.example.com/v1/x?token=query-14-secret")!
        let urlError = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: failingURL, "NSErrorFailingURLStringKey": failingURL.absoluteString])
        let encoding = EncodingError.invalidValue("password-14-secret", EncodingError.Context(codingPath: [], debugDescription: "password-14-secret"))
        let errors: [NetworkError] = [
            .transportFailed(urlError),
            .encodingFailed(encoding),
            .tooManyAttempts(3, lastError: NetworkError.transportFailed(urlError)),
            .tooManyAttempts(3, lastError: urlError),
            .redirectWouldForwardBody(statusCode: 307),
        ]
        // WHEN they are dumped and printed
        let text = errors.map(everyRendering(of:)).joined() + errors.map(\.localizedDescription).joined()
        // THEN no secret appears, while what happened does
        expectHidden(Self.secrets, in: text)
        let saysWhatHappened = text.contains("URLError -1001") && text.contains("307")
        #expect(saysWhatHappened)
    }

    @Test func contextsBodiesAndProvidersShowNoSecret() async throws {
        // GIVEN an endpoint with a secret header and body, a form body, and a signed-in provider
        struct SignIn: Encodable, Sendable { let password: String }
        let endpoint = TestEndpoint(headers: ["X-Api-Key": "api-14-secret"], body: .json(SignIn(password: "password-14-secret")))
        let context = RequestContext(endpoint: endpoint)
        context["note"] = "Bearer bearer-14-secret"
        let form = RequestBody.form(["password": "password-14-secret", "user": "kim"])
        let auth = AuthInterceptor(baseURL: URL(string: "https://api.example.com")!) { credential, _ in credential }
        try await auth.signIn(with: Credential(accessToken: "bearer-14-secret", refreshToken: "cookie-14-secret"))
        let provider = NetworkProvider(interceptor: auth)
        // WHEN they are dumped and printed
        let text = [context, form, endpoint.body, provider].map(everyRendering(of:)).joined()
        // THEN no secret appears, while the shape does
        expectHidden(Self.secrets, in: text)
        let showsTheShape = text.contains("TestEndpoint") && text.contains("SignIn") && text.contains("user")
        #expect(showsTheShape)
    }
}

// MARK: Item 15: cross-origin redirects keep only safe headers and never carry the body

@Suite("Secrets: redirects")
struct RedirectSecretsTests {
    @Test func theErrorSaysWhatHappenedWithoutURLs() {
        // GIVEN the error a refused redirect throws
        let error = NetworkError.redirectWouldForwardBody(statusCode: 308)
        // THEN its description names the status and the reason, and nothing else
        #expect(
            error.description
                == "The server redirected the request (status 308) to another origin; it was not followed, since that would have sent the request body there.")
        #expect(error.localizedDescription == error.description)
    }
}
