import Foundation
import Networking
import NetworkingTestSupport
import TestServer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Token edges over TCP", .timeLimit(.minutes(3)))
struct AuthHardeningTests {
    @Test func aStormAfterAJWTExpiredByTheClockSendsNo401() async throws {
        try await withServer { server in
            // GIVEN a signed-in client whose access token is a JWT whose exp claim has passed (and which
            // the server would refuse), with no expiresAt in the credential
            let client = LiveClient(server)
            let tokens = try await client.signIn()
            let expired = MockAuthServer.jwt(subject: "me", expiresAt: Date() - 60)
            try await client.auth.signIn(with: Credential(accessToken: expired, refreshToken: tokens.refreshToken))
            let refreshesBefore = await server.state.refreshCount
            // WHEN 1,000 requests run at once
            let items = try await withThrowingTaskGroup(of: Item.self) { group in
                for index in 0..<1_000 {
                    group.addTask { try await client.provider.request(client.call("/items/\(index)"), as: Item.self) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // THEN one refresh happened before sending, and the server refused not one token
            #expect(items.count == 1_000 && Set(items.map(\.token)).count == 1)
            #expect(await server.state.refreshCount - refreshesBefore == 1)
            #expect(await server.state.refusedAccessTokenCount == 0)
        }
    }

    @Test func twoProcessesSharingAStoreStaySignedInUnderStrictRotation() async throws {
        try await withServer { server in
            // GIVEN an app and its extension sharing one store, both holding the same credential
            let store = InMemoryCredentialStore()
            let app = LiveClient(server, store: store)
            let appExtension = LiveClient(server, store: store)
            try await app.signIn()
            let shared = try await appExtension.auth.currentCredential()
            #expect(shared != nil)
            try await app.admin("expire")
            // WHEN the app refreshes first, spending the shared refresh token, and then the extension needs a refresh
            let first = try await app.provider.request(app.call("/items/1"), as: Item.self)
            let second = try await appExtension.provider.request(appExtension.call("/items/2"), as: Item.self)
            // THEN the extension's refresh was rejected, and it adopted the app's credential instead of signing out
            #expect(await server.state.rejectedRefreshCount == 1)
            #expect(second.token == first.token)
            let adopted = try await appExtension.auth.currentCredential()
            let appCredential = try await app.auth.currentCredential()
            #expect(adopted != nil && adopted == appCredential)
            #expect(try await store.load() == adopted)
        }
    }
}
