import Foundation

/// What an ``AuthInterceptor`` tells the app about the session.
///
/// It may gain cases in a minor version: a `switch` over it needs a `default:` clause.
public enum AuthEvent: Sendable {
    /// A token refresh started (one for any number of requests that failed with the same token).
    case refreshStarted
    /// The refresh succeeded; the new credential is stored.
    case refreshSucceeded
    /// The refresh failed for a reason that may pass (offline, timeout, 5xx); the credential is kept.
    case refreshFailed(any Error)
    /// The refresh token was rejected: the credential is cleared and the user must sign in again.
    /// Sent once per rejected refresh, however many requests were waiting on it.
    case sessionExpired
    /// The ``CredentialStore`` could not be written (saving a refreshed credential or deleting a
    /// rejected one). The interceptor's own copy is still right; the next launch may read a stale one.
    case storeFailed(any Error)
}

/// Hands every event to each current subscriber's `AsyncStream`.
final class AuthEventBroadcaster: @unchecked Sendable {
    // @unchecked: `subscribers` and `nextID` are guarded by `lock`.
    private let lock = NSLock()
    private var subscribers: [Int: AsyncStream<AuthEvent>.Continuation] = [:]
    private var nextID = 0

    /// The interceptor is gone: every subscriber's stream finishes, so `for await` loops end.
    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    func subscribe() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthEvent.self, bufferingPolicy: .bufferingNewest(64))
        lock.lock()
        let id = nextID
        nextID += 1
        subscribers[id] = continuation
        lock.unlock()
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    func send(_ event: AuthEvent) {
        lock.lock()
        let continuations = Array(subscribers.values)
        lock.unlock()
        for continuation in continuations { continuation.yield(event) }
    }

    private func remove(_ id: Int) {
        lock.lock()
        defer { lock.unlock() }
        subscribers[id] = nil
    }
}
