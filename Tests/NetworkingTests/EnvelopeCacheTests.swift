import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Envelopes and the response cache: a stored answer is read through the envelope as the network's is.
@Suite("Envelopes and the cache", SuiteTimeLimit.oneMinute)
struct EnvelopeCacheTests {
    private static let lee = #"{"divisionCode":"0000","data":{"id":7,"name":"Lee"}}"#
    private static let kim = #"{"divisionCode":"0000","data":{"id":7,"name":"Kim"}}"#

    private func provider(_ server: MockServer, cache: any ResponseCache, clock: ManualClock) -> NetworkProvider {
        NetworkProvider(
            envelope: EnvelopeFormat(APIEnvelope.self), configuration: server.makeConfiguration(basedOn: .ephemeral), cache: cache, now: clock.now)
    }

    @Test("cached-then-fresh reads the payload: the stored value, nothing more after a 304 (RFC 9111 §4.3.4), or the new value")
    func cachedThenFreshReadsThePayload() async throws {
        let server = MockServer()
        let clock = ManualClock()
        let resource = MockResource(body: Data(Self.lee.utf8), etag: "\"v1\"", cacheControl: "max-age=60", headers: ["Content-Type": "application/json"])
        server.stub(.get, "/v1/users/7", resource: resource)
        let provider = provider(server, cache: MemoryResponseCache(), clock: clock)
        var values: [CachedOrFresh<EnvelopedUser>] = []
        for try await update in provider.cachedThenFresh(EnvelopedUserEndpoint(), as: EnvelopedUser.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Lee"] && values.map(\.isFromCache) == [false])
        // Stored and unchanged: the stored payload, then the 304 ends the sequence.
        values = []
        for try await update in provider.cachedThenFresh(EnvelopedUserEndpoint(), as: EnvelopedUser.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Lee"] && values.map(\.isFromCache) == [true])
        #expect(resource.notModifiedResponses == 1)
        // Changed: the stored payload, then the new one.
        clock.advance(by: 120)
        resource.update(body: Data(Self.kim.utf8), etag: "\"v2\"")
        values = []
        for try await update in provider.cachedThenFresh(EnvelopedUserEndpoint(), as: EnvelopedUser.self) { values.append(update) }
        #expect(values.map(\.value.name) == ["Lee", "Kim"])
        #expect(values.map(\.isFromCache) == [true, false])
    }

    @Test("a 304 revalidation answers with the stored payload (RFC 9111 §4.3.4)")
    func aRevalidationAnswersTheStoredPayload() async throws {
        let server = MockServer()
        let clock = ManualClock()
        let resource = MockResource(body: Data(Self.lee.utf8), etag: "\"v1\"", cacheControl: "max-age=60")
        server.stub(.get, "/v1/users/7", resource: resource)
        let provider = provider(server, cache: MemoryResponseCache(), clock: clock)
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self).name == "Lee")
        clock.advance(by: 120)
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser.self).name == "Lee")
        #expect(resource.notModifiedResponses == 1)
        #expect(try await provider.response(EnvelopedUserEndpoint()).report.cache == .hit)   // and stored again, fresh
    }

    @Test(
        "a stored answer that is no successful envelope is a miss when the endpoint has an envelope: removed, the server asked",
        arguments: [
            #"{"divisionCode":"E1"}"#,   // stored before the app declared its envelope: a failure
            #"{"id":7,"name":"Lee"}"#,   // stored by an unwrapped endpoint at the same URL: no envelope
        ])
    func aStoredAnswerThatIsNoSuccessEnvelopeIsAMiss(stored: String) async throws {
        let server = MockServer()
        let clock = ManualClock()
        let cache = MemoryResponseCache()
        server.stub(.get, "/v1/users/7", .json(raw: stored, headers: ["Cache-Control": "max-age=600"]))
        var unwrapped = EnvelopedUserEndpoint()
        unwrapped.envelope = .unwrapped
        _ = try await provider(server, cache: cache, clock: clock).response(unwrapped)   // stored
        server.stub(.get, "/v1/users/7", .json(raw: Self.lee, headers: ["Cache-Control": "max-age=600"]))
        let provider = provider(server, cache: cache, clock: clock)
        #expect(try await provider.request(EnvelopedUserEndpoint(), as: EnvelopedUser?.self) == EnvelopedUser(id: 7, name: "Lee"))
        _ = try await provider.request(EnvelopedUserEndpoint(), as: EmptyResponse.self)
        #expect(server.requests.count == 2)   // the second call is the first's stored success envelope
        // the unwrapped endpoint now meets the enveloped answer that replaced its entry: no envelope check for it
        #expect(try await provider.response(unwrapped).report.cache == .hit)
    }
}
