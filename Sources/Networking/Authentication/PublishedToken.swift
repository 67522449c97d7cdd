import Foundation

/// The access token an ``AuthInterceptor`` would hand out right now without waiting for anything, readable
/// without a turn of the actor: the adapt of an ordinary call takes it under a lock instead of hopping onto the
/// interceptor and back (two task switches an attempt, the costliest part of attaching a token).
///
/// The interceptor publishes it on every change of the state it is made from (the credential with its expiry,
/// whether the store was read, a running refresh, an expired session), in the same turn of the actor as the
/// change. A turn may publish more than once (a sign-in publishes the new credential before it resets the
/// rest of the session), and that is safe because the reader uses only the token and its expiry: at any point
/// of a turn, a published token is one the actor would hand out. There is a token only when the slow path
/// would return the current credential's token at once: the store was read, a credential is held, no refresh
/// runs and the session has not expired. The reader still declines it when the expiry is known and within the
/// refresh leeway (a proactive refresh may be due, or paused: that is decided on the actor).
final class PublishedToken: @unchecked Sendable {
    // @unchecked: `state` is guarded by `lock`.
    private let lock = NSLock()
    private var state: (token: String, expiry: Date?)?

    /// Publishes `token` (with its expiry, when known), or none.
    func publish(_ token: String?, expiry: Date?) {
        lock.lock()
        state = token.map { ($0, expiry) }
        lock.unlock()
    }

    /// The published token and its expiry, if any.
    func read() -> (token: String, expiry: Date?)? {
        lock.lock()
        defer { lock.unlock() }
        return state
    }
}

extension AuthInterceptor {
    /// Publishes the token ``accessToken(for:)`` would return at once in the current state, or none (see
    /// ``PublishedToken``). Called on every change of that state.
    func publishToken() {
        let ready = isLoaded && refreshTask == nil && !sessionDidExpire
        publishedToken.publish(ready ? credential?.accessToken : nil, expiry: expiry)
    }

    /// The published token, unless its expiry is known and within the leeway (the actor decides whether to
    /// refresh first): what ``accessToken(for:)`` would return, without its turn of the actor.
    nonisolated func readyToken() -> String? {
        guard let (token, expiry) = publishedToken.read() else { return nil }
        if let expiry, isWithinLeeway(expiry, at: now()) { return nil }
        return token
    }
}
