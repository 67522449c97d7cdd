import Foundation
import NetworkingTestSupport
import Testing

@testable import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Callers of one shared exchange that decode its answer as the same value type with the same decoder
/// decode it once (``SharedDecodings``); any other caller decodes its own.
@Suite("Coalescing: one decoding per type and decoder for the callers of a shared answer")
struct SharedDecodingTests {
    /// Counts the decodings its decoder runs (read from the decoder's `userInfo`).
    final class DecodeCounter: @unchecked Sendable {
        // @unchecked: `count` is guarded by `lock`.
        static let key = CodingUserInfoKey(rawValue: "SharedDecodingTests.counter")!
        private let lock = NSLock()
        private var decoded = 0
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return decoded
        }
        func add() {
            lock.lock()
            decoded += 1
            lock.unlock()
        }
        /// A decoder whose decodings this counter counts.
        func decoder(_ strategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys) -> JSONDecoder {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = strategy
            decoder.userInfo[Self.key] = self
            return decoder
        }
    }

    struct Profile: Decodable, Equatable {
        let userName: String
        init(from decoder: any Decoder) throws {
            (decoder.userInfo[DecodeCounter.key] as? DecodeCounter)?.add()
            userName = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .userName)
        }
        private enum CodingKeys: String, CodingKey { case userName }
    }

    final class ProfileObject: Decodable, @unchecked Sendable {
        // @unchecked: immutable.
        let userName: String
        required init(from decoder: any Decoder) throws {
            (decoder.userInfo[DecodeCounter.key] as? DecodeCounter)?.add()
            userName = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .userName)
        }
        private enum CodingKeys: String, CodingKey { case userName }
    }

    /// A `GET` whose decoder the caller chooses; one type, so that its calls share whatever their decoder.
    struct ProfileEndpoint: Endpoint {
        var baseURL = URL(string: "https://api.example.com/v1/")!
        var path = "/profile"
        var decoder: JSONDecoder?
    }

    /// `count` identical calls of `call`, the answer held until all but the first joined: one exchange.
    private func sharedCalls<T: Sendable>(
        _ count: Int, body: String, _ call: @escaping @Sendable (NetworkProvider, Int) async throws -> T
    ) async throws -> (values: [T], requests: Int) {
        let gate = Signal()
        let server = gatedServer(gate: gate, response: .json(raw: body))
        let joins = JoinCounter()
        let provider = server.makeProvider(monitors: [joins])
        let calls = (0..<count).map { index in Task { try await call(provider, index) } }
        await joins.waitForJoins(count - 1)
        gate.fire()
        var values: [T] = []
        for call in calls { values.append(try await call.value) }
        return (values, server.requests.count)
    }

    @Test func twoHundredCallersWithOneDecoderDecodeTheSharedAnswerAtMostOncePerThread() async throws {
        // GIVEN 200 identical calls that share one exchange and decode a value type with one decoder
        let counter = DecodeCounter()
        let decoder = counter.decoder()
        let (values, requests) = try await sharedCalls(200, body: #"{"userName":"ada"}"#) { provider, _ in
            try await provider.request(ProfileEndpoint(decoder: decoder), as: Profile.self)
        }
        // THEN each gets the value, and the decoder ran once, or once more per caller that decoded at the same
        // instant on another thread (never once per caller)
        #expect(requests == 1)
        #expect(values.allSatisfy { $0.userName == "ada" })
        #expect(counter.count >= 1)
        #expect(counter.count <= ProcessInfo.processInfo.activeProcessorCount + 1)
    }

    @Test func callersOfOneExchangeWithDifferentDecodersEachGetTheirDecodersValue() async throws {
        // GIVEN 100 calls sharing one exchange: the even ones decode snake_case keys, the odd ones the keys as sent
        let counter = DecodeCounter()
        let (snake, plain) = (counter.decoder(.convertFromSnakeCase), counter.decoder())
        let (values, requests) = try await sharedCalls(100, body: #"{"user_name":"snake","userName":"plain"}"#) { provider, index in
            try await provider.request(ProfileEndpoint(decoder: index.isMultiple(of: 2) ? snake : plain), as: Profile.self).userName
        }
        // THEN each caller's value is its decoder's: no value decoded with one decoder reaches a caller of the other
        #expect(requests == 1)
        for (index, value) in values.enumerated() { #expect(value == (index.isMultiple(of: 2) ? "snake" : "plain")) }
        #expect(counter.count >= 2)
    }

    @Test func aClassIsDecodedForEachCaller() async throws {
        // GIVEN 40 calls sharing one exchange, decoding a class
        let counter = DecodeCounter()
        let decoder = counter.decoder()
        let (values, requests) = try await sharedCalls(40, body: #"{"userName":"ada"}"#) { provider, _ in
            try await provider.request(ProfileEndpoint(decoder: decoder), as: ProfileObject.self)
        }
        // THEN no two callers hold one instance: each decoded its own
        #expect(requests == 1)
        #expect(counter.count == 40)
        #expect(Set(values.map(ObjectIdentifier.init)).count == 40)
    }

    @Test func aValueHoldingObjectsIsDecodedForEachCaller() async throws {
        // GIVEN 40 calls sharing one exchange, decoding an array of class instances (a value type holding objects)
        let counter = DecodeCounter()
        let decoder = counter.decoder()
        let (values, requests) = try await sharedCalls(40, body: #"[{"userName":"ada"}]"#) { provider, _ in
            try await provider.request(ProfileEndpoint(decoder: decoder), as: [ProfileObject].self)
        }
        // THEN no two callers hold one instance: each decoded its own array
        #expect(requests == 1)
        #expect(counter.count == 40)
        #expect(Set(values.compactMap(\.first).map(ObjectIdentifier.init)).count == 40)
    }

    /// A `GET` whose decoder is made anew at each read, from its own field.
    struct FreshDecoderEndpoint: Endpoint {
        var baseURL = URL(string: "https://api.example.com/v1/")!
        var path = "/profile"
        let snakeCase: Bool
        var decoder: JSONDecoder? {
            let decoder = JSONDecoder()
            if snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
            return decoder
        }
    }

    @Test func callersWhoseDecodersAreMadePerCallGetTheirOwnDecodersValue() async throws {
        // GIVEN 200 calls sharing one exchange, each reading a decoder made for it (a freed decoder's address may
        // be reused by the next one made)
        let (values, requests) = try await sharedCalls(200, body: #"{"user_name":"snake","userName":"plain"}"#) { provider, index in
            try await provider.request(FreshDecoderEndpoint(snakeCase: index.isMultiple(of: 2)), as: Profile.self).userName
        }
        // THEN each caller's value is the one its own decoder makes
        #expect(requests == 1)
        for (index, value) in values.enumerated() { #expect(value == (index.isMultiple(of: 2) ? "snake" : "plain")) }
    }

    @Test func aFailedDecodingIsEachCallersOwnError() async throws {
        // GIVEN 20 calls sharing an answer that is not a Profile
        let decoder = DecodeCounter().decoder()
        let (values, requests) = try await sharedCalls(20, body: #"{"name":"ada"}"#) { provider, _ in
            do {
                _ = try await provider.request(ProfileEndpoint(decoder: decoder), as: Profile.self)
                return false
            } catch NetworkError.decodingFailed {
                return true
            }
        }
        // THEN every caller meets the decoding error: none is handed a value
        #expect(requests == 1)
        #expect(values.allSatisfy { $0 })
    }

    @Test func aCallAloneKeepsNoDecodings() async throws {
        // GIVEN one call, sharing its exchange with nobody
        let server = MockServer()
        server.stub(.get, "/v1/profile", .json(raw: #"{"userName":"ada"}"#))
        let provider = server.makeProvider()
        // THEN its response carries nothing for other callers (no box is made for an answer nobody shares)
        let response = try await provider.response(ProfileEndpoint())
        #expect(response.sharedDecodings == nil)
        #expect(try provider.decode(response, as: Profile.self, for: ProfileEndpoint()).userName == "ada")
    }
}
