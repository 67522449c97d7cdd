// Calls written against earlier versions of the package, each through a deprecated shim. Building this
// package proves that they still compile; every warning it prints must be a deprecation.
import Foundation
import Networking

struct TokenResponse: Decodable {
    let accessToken: String
    let refreshToken: String
}

struct Refresh: Endpoint {
    let refreshToken: String
    var baseURL: URL { URL(string: "https://api.example.com")! }
    var path: String { "/oauth/token" }
    var method: HTTPMethod { .post }
    var body: RequestBody { .json(["refresh_token": refreshToken]) }
    var requiresAuthentication: Bool { false }
}

let api = URL(string: "https://api.example.com")!
let refresher = NetworkProvider()

// As before the refresh closure got its `network` parameter: it takes only the credential.
let auth = AuthInterceptor(baseURL: api, store: InMemoryCredentialStore()) { credential in
    let answer = try await refresher.request(Refresh(refreshToken: credential.refreshToken), as: TokenResponse.self)
    return Credential(accessToken: answer.accessToken, refreshToken: answer.refreshToken)
}
let provider = NetworkProvider(interceptor: auth)
print("built", provider.maximumAttempts)

// As before `sessionConfiguration`: the provider's own URLSession (deprecated: it has no additional headers).
print("session", provider.session.configuration.timeoutIntervalForRequest)

// As before `rejection:`: `isRejection:` (deprecated: it now adds to the status rule, as `.statusRule(or:)`).
struct RefusalError: Error {}
let judging = AuthInterceptor(
    baseURL: api, isRejection: { $0 is RefusalError },
    refresh: { credential, network in
        let answer = try await network.request(Refresh(refreshToken: credential.refreshToken), as: TokenResponse.self)
        return Credential(accessToken: answer.accessToken, refreshToken: answer.refreshToken)
    })
print("judging", judging.expiredStatusCodes)
