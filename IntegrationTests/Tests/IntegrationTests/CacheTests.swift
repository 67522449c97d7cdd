import Foundation
import Networking
import NetworkingTestSupport
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `/cache/etag/{key}`'s body.
struct Versioned: Decodable, Equatable, Sendable {
    let key: String
    let version: Int
}

/// `/cache/plain/{key}`'s and `/cache/no-store`'s body: how many 200s the route gave, this one included.
struct Served: Decodable, Sendable {
    let served: Int
}

/// `/cache/me`'s body: the account of the bearer token.
struct AccountData: Decodable, Equatable, Sendable {
    let account: String
    let version: Int
}

extension TestServer {
    /// How many times the cache route at `path` answered with each status so far, e.g. `[200: 1, 304: 2]`.
    func answers(of path: String) async throws -> [Int: Int] {
        let stats = try await NetworkProvider().request(
            Call(baseURL: baseURL, path: "/cache/stats", requiresAuthentication: false), as: [String: [String: Int]].self)
        var answers: [Int: Int] = [:]
        for (status, count) in stats[path] ?? [:] { answers[Int(status) ?? 0] = count }
        return answers
    }
}

extension Response {
    func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}

/// The response cache over real TCP: the server decides 200 or 304 and counts what it answered.
///
/// Every provider measures freshness with a ``ManualClock`` that starts at the real now, and no test sleeps.
/// The server's `Date` header is the real time (Hummingbird always sets it), so a response arrives fresh
/// while the clock is where it started; once a test moved the clock by T, a response arrives already T old
/// (RFC 9111's apparent age, as from a server whose clock is behind). So a test reads freshness from its
/// start: with `max-age=60`, an entry is fresh until the clock has moved 60 s, whichever response renewed it.
@Suite("Response cache over TCP", .timeLimit(.minutes(1)))
struct CacheTests {
    let clock = ManualClock(start: Date())
    let store = MemoryResponseCache()

    func cachingProvider(policy: CachePolicy = .http) -> NetworkProvider {
        NetworkProvider(configuration: .ephemeral, cache: store, cachePolicy: policy, now: clock.now)
    }

    @Test("ETag: fresh → hit without a request; stale → If-None-Match → 304 with the stored body; changed → 200")
    func etagRevalidation() async throws {
        try await withServer { server in
            // GIVEN a document stored with ETag "v1", fresh for 60 s
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/etag/a")
            let first = try await provider.response(document)
            // WHEN it is asked for within its freshness, then after it
            clock.advance(by: 50)
            let hit = try await provider.response(document)
            clock.advance(by: 20)
            let revalidated = try await provider.response(document)
            // THEN the hit sent nothing, and the server answered the stale one's conditional request with 304
            #expect(first.report.cache == .miss)
            #expect(hit.report.cache == .hit)
            #expect(hit.report.statusCodes.isEmpty)
            #expect(revalidated.report.cache == .revalidated)
            #expect(revalidated.report.statusCodes == [304])
            #expect(revalidated.statusCode == 200)
            #expect(try revalidated.decoded(as: Versioned.self) == Versioned(key: "a", version: 1))
            #expect(try await server.answers(of: "/cache/etag/a") == [200: 1, 304: 1])
            // AND WHEN another client changes it (the plain provider: no cache to invalidate) and it is stale again
            _ = try await NetworkProvider().response(Call(baseURL: server.baseURL, path: "/cache/etag/a", method: .put))
            clock.advance(by: 70)
            let changed = try await provider.response(document)
            // THEN the server's 200 with the new version answers, and replaces the entry: the next revalidation sends "v2"
            #expect(changed.report.cache == .miss)
            #expect(changed.report.statusCodes == [200])
            #expect(try changed.decoded(as: Versioned.self) == Versioned(key: "a", version: 2))
            let next = try await provider.response(document)
            #expect(next.report.cache == .revalidated)
            #expect(try next.decoded(as: Versioned.self) == Versioned(key: "a", version: 2))
            #expect(try await server.answers(of: "/cache/etag/a") == [200: 2, 304: 2, 204: 1])
        }
    }

    @Test("Last-Modified: a stale entry is revalidated with If-Modified-Since; the 304 gives the stored body")
    func lastModifiedRevalidation() async throws {
        try await withServer { server in
            // GIVEN a document stored with a Last-Modified date and no ETag, fresh for 60 s
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/modified/b")
            _ = try await provider.response(document)
            // WHEN it is stale
            clock.advance(by: 70)
            let revalidated = try await provider.response(document)
            // THEN the server saw the stored date and answered 304; the stored body came back with status 200
            #expect(revalidated.report.cache == .revalidated)
            #expect(revalidated.report.statusCodes == [304])
            #expect(revalidated.statusCode == 200)
            #expect(String(decoding: revalidated.data, as: UTF8.self) == #"{"key":"b"}"#)
            #expect(revalidated.value(forHTTPHeaderField: "Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT")
            #expect(try await server.answers(of: "/cache/modified/b") == [200: 1, 304: 1])
        }
    }

    @Test("Vary: Accept-Language: one language's entry never answers another")
    func varyAcceptLanguage() async throws {
        try await withServer { server in
            // GIVEN a greeting that varies by Accept-Language
            let provider = cachingProvider()
            func greet(_ language: String) async throws -> (String?, CacheResult?) {
                let response = try await provider.response(
                    Call(baseURL: server.baseURL, path: "/cache/greeting", headers: ["Accept-Language": language]))
                return (try response.decoded(as: [String: String].self)["greeting"], response.report.cache)
            }
            // WHEN it is asked for in English, English, French, French, English
            var answers: [(String?, CacheResult?)] = []
            for language in ["en", "en", "fr", "fr", "en"] { answers.append(try await greet(language)) }
            // THEN each language got its own greeting: the stored English one never answered French, nor the French one English
            #expect(answers.map(\.0) == ["hello", "hello", "bonjour", "bonjour", "hello"])
            #expect(answers.map(\.1) == [.miss, .hit, .miss, .hit, .miss])
            #expect(try await server.answers(of: "/cache/greeting") == [200: 3])
        }
    }

    @Test("max-age: fresh until the provider's clock passes it, then loaded again (no validator: an unconditional 200)")
    func expiry() async throws {
        try await withServer { server in
            // GIVEN a document without validator, fresh for 60 s
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/plain/c")
            let first = try await provider.response(document)
            // WHEN 55 s pass, then 10 more
            clock.advance(by: 55)
            let fresh = try await provider.response(document)
            clock.advance(by: 10)
            let expired = try await provider.response(document)
            // THEN the first use is answered from the store, the second by the server
            #expect(try first.decoded(as: Served.self).served == 1)
            #expect(fresh.report.cache == .hit)
            #expect(try fresh.decoded(as: Served.self).served == 1)
            #expect(expired.report.cache == .miss)
            #expect(try expired.decoded(as: Served.self).served == 2)
            #expect(try await server.answers(of: "/cache/plain/c") == [200: 2])
        }
    }

    @Test("no-store: never stored, however long its max-age; every call reaches the server")
    func noStore() async throws {
        try await withServer { server in
            // GIVEN a response that says no-store, max-age=600 and has an ETag
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/no-store")
            // WHEN it is asked for twice
            let first = try await provider.response(document)
            let second = try await provider.response(document)
            // THEN both came from the server, unconditionally, and the store holds nothing
            #expect(first.report.cache == .miss && second.report.cache == .miss)
            #expect(try second.decoded(as: Served.self).served == 2)
            #expect(store.count == 0)
            #expect(try await server.answers(of: "/cache/no-store") == [200: 2])
        }
    }

    @Test("a 304's headers are merged: the new X-Revision and Cache-Control show and rule; status 200, stored body")
    func headersMergedOn304() async throws {
        try await withServer { server in
            // GIVEN a stored response with X-Revision 1, fresh for 60 s
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/merge")
            let first = try await provider.response(document)
            // WHEN it is stale and the server's 304 carries X-Revision 2 and max-age=600
            clock.advance(by: 70)
            let revalidated = try await provider.response(document)
            clock.advance(by: 300)
            let later = try await provider.response(document)
            // THEN the answer has the 304's headers with the stored body and status
            #expect(first.value(forHTTPHeaderField: "X-Revision") == "1")
            #expect(revalidated.report.cache == .revalidated)
            #expect(revalidated.statusCode == 200)
            #expect(String(decoding: revalidated.data, as: UTF8.self) == #"{"name":"Kim"}"#)
            #expect(revalidated.value(forHTTPHeaderField: "X-Revision") == "2")
            #expect(revalidated.value(forHTTPHeaderField: "Cache-Control") == "max-age=600")
            #expect(revalidated.value(forHTTPHeaderField: "Content-Type") == "application/json")
            // AND the new max-age rules the entry: 370 s after it was stored, 300 s after the 304, it is still fresh
            #expect(later.report.cache == .hit)
            #expect(later.value(forHTTPHeaderField: "X-Revision") == "2")
            #expect(try await server.answers(of: "/cache/merge") == [200: 1, 304: 1])
        }
    }

    @Test("a successful POST, PUT or DELETE of the URL removes its entry: the next GET reaches the server", arguments: [HTTPMethod.post, .put, .delete])
    func invalidationByUnsafeMethod(_ method: HTTPMethod) async throws {
        try await withServer { server in
            // GIVEN a stored document, fresh for 60 s
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/etag/d")
            _ = try await provider.response(document)
            #expect(try await provider.response(document).report.cache == .hit)
            // WHEN the same URL is changed through the same provider
            var change = document
            change.method = method
            #expect(try await provider.response(change).statusCode == 204)
            // THEN the next GET, still within the old freshness, gets the new version from the server
            let after = try await provider.response(document)
            #expect(after.report.cache == .miss)
            #expect(try after.decoded(as: Versioned.self).version == 2)
            #expect(try await server.answers(of: "/cache/etag/d") == [200: 2, 204: 1])
        }
    }

    @Test("an authenticated PUT removes the account's entry of that URL")
    func invalidationOfAnAccountsEntry() async throws {
        try await withServer { server in
            // GIVEN alice's profile, stored in her partition
            let client = LiveClient(server, cache: store, now: clock.now)
            try await client.signIn(account: "alice", path: "/cache/sign-in")
            _ = try await client.provider.response(client.call("/cache/me"))
            #expect(try await client.provider.response(client.call("/cache/me")).report.cache == .hit)
            // WHEN she changes it
            _ = try await client.provider.response(client.call("/cache/me", .put))
            // THEN the next GET gets the new version from the server
            let after = try await client.provider.response(client.call("/cache/me"))
            #expect(after.report.cache == .miss)
            #expect(try after.decoded(as: AccountData.self) == AccountData(account: "alice", version: 2))
            #expect(try await server.answers(of: "/cache/me") == [200: 2, 204: 1])
        }
    }

    @Test("stale-if-error: with the server stopped, the stale entry answers; past the allowed staleness, the error does")
    func staleIfErrorWhenTheServerIsGone() async throws {
        // GIVEN a document stored from a server that then stops, 60 s stale
        let provider = cachingProvider(policy: .staleIfError(upTo: 600))
        let document = try await withServer { gone in
            let document = Call(baseURL: gone.baseURL, path: "/cache/plain/e")
            _ = try await provider.response(document)
            return document
        }
        clock.advance(by: 120)
        // WHEN it is asked for
        let stale = try await provider.response(document)
        // THEN the stored body answers, marked stale-if-error, after one attempt that got no status
        #expect(stale.report.cache == .staleIfError)
        #expect(stale.report.cache?.isStale == true)
        #expect(stale.report.statusCodes == [nil])
        #expect(try stale.decoded(as: Served.self).served == 1)
        // AND WHEN it is more than 600 s stale, the transport error is thrown
        clock.advance(by: 600)
        await #expect {
            try await provider.response(document)
        } throws: { error in
            if case NetworkError.transportFailed = error { return true } else { return false }
        }
    }

    @Test("stale-if-error: a 503 is answered by the stale entry; under the HTTP policy the 503 is thrown")
    func staleIfErrorOn503() async throws {
        try await withServer { server in
            // GIVEN a document stored from a route that answers 503 after its first 200, now 60 s stale
            let document = Call(baseURL: server.baseURL, path: "/cache/flaky")
            _ = try await cachingProvider(policy: .staleIfError(upTo: 600)).response(document)
            clock.advance(by: 120)
            // WHEN it is asked for under stale-if-error, then under the HTTP rules
            let stale = try await cachingProvider(policy: .staleIfError(upTo: 600)).response(document)
            await #expect(throws: NetworkError.invalidStatusCode(503)) { try await cachingProvider(policy: .http).response(document) }
            // THEN the first got the stored body after the server's 503
            #expect(stale.report.cache == .staleIfError)
            #expect(stale.report.statusCodes == [503])
            #expect(String(decoding: stale.data, as: UTF8.self) == #"{"name":"Kim"}"#)
            #expect(try await server.answers(of: "/cache/flaky") == [200: 1, 503: 2])
        }
    }

    @Test("two accounts never share an entry: after alice, bob's call reaches the server and gets bob's data")
    func accountsAfterEachOther() async throws {
        try await withServer { server in
            // GIVEN alice's profile, stored
            let client = LiveClient(server, cache: store, now: clock.now)
            try await client.signIn(account: "alice", path: "/cache/sign-in")
            #expect(try await client.provider.request(client.call("/cache/me"), as: AccountData.self).account == "alice")
            #expect(try await client.provider.response(client.call("/cache/me")).report.cache == .hit)
            // WHEN bob signs in on the same device and asks for the same URL
            try await client.signIn(account: "bob", path: "/cache/sign-in")
            let bobs = try await client.provider.response(client.call("/cache/me"))
            // THEN the server answered him with his data; alice's entry is gone, his is stored
            #expect(bobs.report.cache == .miss)
            #expect(try bobs.decoded(as: AccountData.self).account == "bob")
            #expect(try await server.answers(of: "/cache/me") == [200: 2])
            #expect(store.count == 1)
            #expect(try await client.provider.request(client.call("/cache/me"), as: AccountData.self).account == "bob")
        }
    }

    @Test("two accounts signed in at once over one store: each is answered from its own entry only")
    func accountsSideBySide() async throws {
        try await withServer { server in
            // GIVEN alice and bob, each with an AuthInterceptor, sharing one store
            let alice = LiveClient(server, cache: store, now: clock.now)
            let bob = LiveClient(server, cache: store, now: clock.now)
            try await alice.signIn(account: "alice", path: "/cache/sign-in")
            try await bob.signIn(account: "bob", path: "/cache/sign-in")
            // WHEN each asks for /cache/me twice, in turns
            var seen: [String] = []
            for client in [alice, bob, alice, bob] {
                let response = try await client.provider.response(client.call("/cache/me"))
                seen.append("\(try response.decoded(as: AccountData.self).account) \(response.report.cache?.description ?? "-")")
            }
            // THEN each got their own data, from the server once and then from their own entry
            #expect(seen == ["alice miss", "bob miss", "alice hit", "bob hit"])
            #expect(store.count == 2)
            #expect(try await server.answers(of: "/cache/me") == [200: 2])
        }
    }

    @Test("sign-out removes every entry of the account and keeps the public ones")
    func signOutClears() async throws {
        try await withServer { server in
            // GIVEN alice's profile and a public document, stored
            let client = LiveClient(server, cache: store, now: clock.now)
            try await client.signIn(account: "alice", path: "/cache/sign-in")
            _ = try await client.provider.response(client.call("/cache/me"))
            var publicDocument = client.call("/cache/plain/public")
            publicDocument.requiresAuthentication = false
            _ = try await client.provider.response(publicDocument)
            #expect(store.count == 2)
            // WHEN she signs out
            try await client.auth.signOut()
            // THEN only the public entry is left
            #expect(store.count == 1)
            #expect(try await client.provider.response(publicDocument).report.cache == .hit)
            // AND signed in again, her profile comes from the server
            try await client.signIn(account: "alice", path: "/cache/sign-in")
            #expect(try await client.provider.response(client.call("/cache/me")).report.cache == .miss)
            #expect(try await server.answers(of: "/cache/me") == [200: 2])
        }
    }

    @Test("the session's URLCache is never consulted: without the provider's cache, a max-age response is fetched each time")
    func sessionURLCacheIsOff() async throws {
        try await withServer { server in
            // GIVEN providers from the default configuration (which has a URLCache), one without a cache and one whose policy disables it
            let document = Call(baseURL: server.baseURL, path: "/cache/plain/u")
            let uncached = NetworkProvider(configuration: .default)
            let disabled = NetworkProvider(configuration: .default, cache: store, cachePolicy: .disabled, now: clock.now)
            // WHEN each asks twice for a response that says max-age=60
            var served: [Int] = []
            for provider in [uncached, uncached, disabled, disabled] {
                let response = try await provider.response(document)
                #expect(response.report.cache == nil)
                served.append(try response.decoded(as: Served.self).served)
            }
            // THEN every call reached the server: URLSession answered none from its own cache
            #expect(served == [1, 2, 3, 4])
            #expect(try await server.answers(of: "/cache/plain/u") == [200: 4])
            // (FoundationNetworking answers nothing from a URLCache even when one is kept: on Linux, these catch a regression)
            for provider in [uncached, disabled] {
                #expect(provider.sessionConfiguration.urlCache == nil)
                #expect(provider.sessionConfiguration.requestCachePolicy == .reloadIgnoringLocalCacheData)
            }
            #expect(store.count == 0)
        }
    }

    @Test("a revalidation meets an expired token: 401, one refresh, the conditional request again, 304")
    func revalidationWithExpiredToken() async throws {
        try await withServer { server in
            // GIVEN alice's document, stored and now stale, and her access token expired
            let client = LiveClient(server, cache: store, now: clock.now)
            try await client.signIn(account: "alice")
            _ = try await client.provider.response(client.call("/cache/private/r"))
            clock.advance(by: 70)
            try await client.admin("expire")
            // WHEN she asks for it
            let response = try await client.provider.response(client.call("/cache/private/r"))
            // THEN the conditional request was refused, the token refreshed once, and the retry got a 304
            #expect(response.report.statusCodes == [401, 304])
            #expect(response.report.cache == .revalidated)
            #expect(response.statusCode == 200)
            #expect(String(decoding: response.data, as: UTF8.self) == #"{"key":"r"}"#)
            #expect(await server.state.refreshCount == 1)
            #expect(try await server.answers(of: "/cache/private/r") == [200: 1, 401: 1, 304: 1])
        }
    }

    @Test("cached-then-fresh over TCP: the stored value, then nothing on 304, or the new value on 200")
    func cachedThenFresh() async throws {
        try await withServer { server in
            // GIVEN a stored document, version 1
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/etag/f")
            _ = try await provider.response(document)
            func updates() async throws -> [String] {
                var values: [String] = []
                for try await update in provider.cachedThenFresh(document, as: Versioned.self) {
                    values.append("v\(update.value.version) \(update.isFromCache ? "cached" : "fresh")")
                }
                return values
            }
            // WHEN it is unchanged
            let unchanged = try await updates()
            // THEN the stored value only: the server answered the conditional request with 304
            #expect(unchanged == ["v1 cached"])
            #expect(try await server.answers(of: "/cache/etag/f") == [200: 1, 304: 1])
            // AND WHEN another client changed it
            _ = try await NetworkProvider().response(Call(baseURL: server.baseURL, path: "/cache/etag/f", method: .put))
            let changed = try await updates()
            // THEN the stored value, then the server's
            #expect(changed == ["v1 cached", "v2 fresh"])
            #expect(try await server.answers(of: "/cache/etag/f") == [200: 2, 304: 1, 204: 1])
            #expect(try await provider.response(document).decoded(as: Versioned.self).version == 2)
        }
    }

    @Test("200 concurrent calls to a fresh entry: exactly one request ever reaches the server")
    func concurrentHits() async throws {
        try await withServer { server in
            // GIVEN a stored, fresh document
            let provider = cachingProvider()
            let document = Call(baseURL: server.baseURL, path: "/cache/etag/g")
            _ = try await provider.response(document)
            // WHEN 200 calls ask for it at once
            let results = try await withThrowingTaskGroup(of: (CacheResult?, Int).self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        let response = try await provider.response(document)
                        return (response.report.cache, try response.decoded(as: Versioned.self).version)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // THEN every one was a hit with the stored body, and the server saw only the first request
            #expect(results.count == 200)
            #expect(results.allSatisfy { $0.0 == .hit && $0.1 == 1 })
            #expect(try await server.answers(of: "/cache/etag/g") == [200: 1])
        }
    }
}
