import Foundation
import Networking
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Token story over TCP", .timeLimit(.minutes(3)))
struct TokenStoryTests {
    @Test func signInUseExpireRefreshRotateRevoke() async throws {
        try await withServer { server in
            let client = LiveClient(server)
            let events = client.auth.events()
            // sign in and use
            let first = try await client.signIn()
            #expect(try await client.provider.request(client.call("/items/1"), as: Item.self).token == first.accessToken)
            // expire: one refresh, and the request succeeds with the rotated token
            try await client.admin("expire")
            let item = try await client.provider.request(client.call("/items/2"), as: Item.self)
            #expect(item.token != first.accessToken)
            #expect(await server.state.refreshCount == 1)
            // rotation: the first refresh token was revoked by the refresh
            await #expect {
                try await client.plain.response(client.call("/auth/refresh", .post, body: .json(["refreshToken": first.refreshToken])))
            } throws: { error in
                if case NetworkError.invalidStatusCode(401) = error { return true } else { return false }
            }
            // revoke: the session is over, once
            try await client.admin("revoke")
            await #expect {
                try await client.provider.response(client.call("/items/3"))
            } throws: { error in
                if case NetworkError.sessionExpired = error { return true } else { return false }
            }
            #expect(try await client.auth.currentCredential() == nil)
            // sign in again; the next expiry refreshes as usual (and marks the end of the event log)
            try await client.signIn()
            try await client.admin("expire")
            _ = try await client.provider.request(client.call("/items/4"), as: Item.self)
            var seen: [String] = []
            for await event in events {
                seen.append("\(event)")
                if seen.filter({ $0 == "refreshSucceeded" }).count == 2 { break }
            }
            #expect(seen == ["refreshStarted", "refreshSucceeded", "refreshStarted", "sessionExpired", "refreshStarted", "refreshSucceeded"])
        }
    }

    @Test func thousandConcurrentRequestsWithAnExpiredTokenShareOneRefresh() async throws {
        try await withServer { server in
            let client = LiveClient(server)
            try await client.signIn()
            try await client.admin("expire")
            let refreshesBefore = await server.state.refreshCount
            let items = try await withThrowingTaskGroup(of: Item.self) { group in
                for index in 0..<1_000 {
                    group.addTask { try await client.provider.request(client.call("/items/\(index)"), as: Item.self) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(items.count == 1_000)
            #expect(Set(items.map(\.id)).count == 1_000)
            #expect(Set(items.map(\.token)).count == 1)
            #expect(await server.state.refreshCount - refreshesBefore == 1)
        }
    }
}

@Suite("Redirects over TCP", .timeLimit(.minutes(1)))
struct RedirectTests {
    @Test func crossOriginRedirectArrivesWithoutCredentials() async throws {
        try await withServer { server in
            for header in [AuthorizationHeader.bearer, AuthorizationHeader(name: "accessToken")] {
                let client = LiveClient(server, header: header)
                try await client.signIn()
                let response = try await client.provider.response(client.call("/redirect/cross", headers: ["Cookie": "session=secret-cookie"]))
                #expect(String(decoding: response.data, as: UTF8.self) == "foreign")
            }
            let received = await server.state.foreignRequests
            #expect(received.count == 2)
            for headers in received {
                let names = Set(headers.keys.map { $0.lowercased() })
                #expect(!names.contains("authorization"))
                #expect(!names.contains("cookie"))
                #expect(!names.contains("accesstoken"))
                #expect(!headers.values.contains { $0.contains("access-") || $0.contains("secret-cookie") })
            }
        }
    }

    @Test func sameOriginRedirectKeepsThem() async throws {
        try await withServer { server in
            let client = LiveClient(server)
            let tokens = try await client.signIn()
            let echo = try await client.provider.request(client.call("/redirect/same", headers: ["Cookie": "session=abc"]), as: Echo.self)
            #expect(echo.path == "/echo")
            #expect(echo.headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer \(tokens.accessToken)")
            #expect(echo.headers.first { $0.key.lowercased() == "cookie" }?.value == "session=abc")
        }
    }
}
