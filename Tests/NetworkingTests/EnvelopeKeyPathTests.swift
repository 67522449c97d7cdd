import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An app's decorator: it implements `NetworkProviding` by forwarding to a provider (say, to log calls), and
/// leaves the key-path requirement to the protocol's default.
struct ForwardingNetwork: NetworkProviding {
    let base: NetworkProvider

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        try await base.request(endpoint, as: type, interceptor: interceptor)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await base.response(endpoint, interceptor: interceptor)
    }
}

/// A caller's key path is read inside the envelope's payload exactly once, however the provider is wrapped,
/// and only a missing payload, without a key path, is lenient.
@Suite("Envelopes and key paths", SuiteTimeLimit.oneMinute)
struct EnvelopeKeyPathTests {
    private static let body = #"{"divisionCode":"0000","data":{"user":{"id":7,"name":"Lee"}}}"#

    @Test func aWrappersKeyPathIsReadInsideThePayloadOnce() async throws {
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: Self.body))
        let network: any NetworkProviding = ForwardingNetwork(base: envelopedProvider(server))
        #expect(try await network.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self, atKeyPath: "user") == EnvelopedUser(id: 7, name: "Lee"))
        #expect(try await network.request(EnvelopedUserEndpoint(), as: EnvelopedUser?.self, atKeyPath: "user") == EnvelopedUser(id: 7, name: "Lee"))
        // an empty key path is the whole payload, as it is the whole body without an envelope
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"0000","data":{"id":7,"name":"Lee"}}"#))
        #expect(try await network.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self, atKeyPath: "") == EnvelopedUser(id: 7, name: "Lee"))
    }

    @Test(arguments: [false, true])
    func aMistypedKeyPathFailsInsteadOfDecodingAsNothing(wrapped: Bool) async throws {
        // The key-path rule: a missing key fails, whatever the type; only a null decodes as nil.
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(raw: Self.body))
        let provider = envelopedProvider(server)
        let network: any NetworkProviding = wrapped ? ForwardingNetwork(base: provider) : provider
        for call in [
            { _ = try await network.request(EnvelopedUserEndpoint(), as: EnvelopedUser?.self, atKeyPath: "usr") },
            { _ = try await network.request(EnvelopedUserEndpoint(), as: EmptyResponse.self, atKeyPath: "usr") },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await call()
                Issue.record("a missing key decoded")
            } catch let NetworkError.decodingFailed(type, _) {
                #expect(type.contains(#"key path "data.usr""#))
            }
        }
        // a null at the end of the path is nil for an Optional
        server.stub(.get, "/v1/users/7", .json(raw: #"{"divisionCode":"0000","data":{"user":null}}"#))
        #expect(try await network.request(EnvelopedUserEndpoint(), as: EnvelopedUser?.self, atKeyPath: "user") == nil)
    }
}
