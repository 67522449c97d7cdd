import Foundation

/// Where an ``AuthInterceptor`` keeps the user's ``Credential`` between launches.
///
/// The interceptor reads the store once and then keeps its own copy, writing every change through
/// (sign-in, each refresh with its rotated refresh token, sign-out, a rejected refresh).
/// Use ``InMemoryCredentialStore`` for tests and servers, `KeychainCredentialStore` on Apple platforms.
public protocol CredentialStore: Sendable {
    /// The stored credential, or `nil` when the user is signed out.
    func load() async throws -> Credential?
    /// Stores `credential`, replacing any earlier one.
    func save(_ credential: Credential) async throws
    /// Removes the stored credential.
    func delete() async throws
}

/// A ``CredentialStore`` that keeps the credential in memory only.
public actor InMemoryCredentialStore: CredentialStore {
    private var credential: Credential?

    /// Creates a store holding `credential`, or empty.
    public init(_ credential: Credential? = nil) {
        self.credential = credential
    }

    // The protocol's signatures, `async throws` included, so that `try await store.load()` reads the
    // same (and compiles without a warning) whichever store a call site holds. Never throws.
    /// The credential held, or `nil` when the store is empty.
    public func load() async throws -> Credential? { credential }
    /// Holds `credential`, replacing any earlier one.
    public func save(_ credential: Credential) async throws { self.credential = credential }
    /// Forgets the held credential.
    public func delete() async throws { credential = nil }
}
