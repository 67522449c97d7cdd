import Foundation

/// Why an ``Outbox`` refused something. Every case is thrown before anything is written (an `enqueue` that
/// throws leaves no trace on disk), and no case carries a secret.
public enum OutboxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another ``Outbox`` — in this process or another — has the folder open. Two outboxes never write
    /// one folder: the first holds an exclusive lock on its `.lock` file until it is closed or its process
    /// dies.
    case folderInUse(URL)
    /// The outbox holds ``OutboxConfiguration/maximumCount`` mutations, or the new one would take its bytes
    /// above ``OutboxConfiguration/maximumBytes``: nothing was dropped, and this one was not kept. `count`
    /// and `bytes` are what the outbox holds.
    case full(count: Int, bytes: Int64)
    /// The method is safe (`GET`, `HEAD`, `OPTIONS`, `TRACE`; RFC 9110 §9.2.1): not a mutation.
    case notAMutation(HTTPMethod)
    /// The endpoint sets a header or query parameter that carries a secret (one a ``Redactor`` hides, such as
    /// `Authorization`, `Cookie`, `X-Api-Key`, or the header an ``AuthInterceptor`` writes): it would be written
    /// to disk in the clear. Let an interceptor add it when the mutation is sent. `name` is the field's name.
    case containsSecret(name: String)
    /// The endpoint's request cannot be built (its URL, headers or body): the underlying error.
    case invalidMutation(String)
    /// The outbox's folder could not be written or read: the operation, path and `errno`.
    case storageFailed(String)
    /// No mutation of this identifier is in the outbox (delivered, discarded, or never there).
    case unknownMutation(OutboxMutation.ID)
    /// The mutation is being sent right now: wait for its outcome.
    case mutationInFlight(OutboxMutation.ID)
    /// The mutation was enqueued by `expected`, and the provider's credential is another account's (or
    /// none): the token was not attached and nothing was sent. Thrown by ``AuthInterceptor`` while it adapts
    /// a mutation's request, so that one account's write never leaves with another account's token.
    case accountChanged(expected: String)
    /// The outbox was closed: it no longer reads or writes its folder (a successor may own it).
    case closed
    /// The endpoint needs a token from an ``AuthInterceptor`` whose scope covers its URL, and nobody is
    /// signed in (or the session expired): the mutation would be bound to no account and sent later with
    /// whoever signs in next. Enqueue it once an account is signed in.
    case notSignedIn
    /// The credential store could not be read (a Keychain locked before the first unlock, say), so the
    /// account the mutation belongs to is unknown: nothing was written. The store's error, redacted.
    case credentialsUnavailable(String)

    /// A one-line description (no secret: names, counts and paths only).
    public var description: String {
        switch self {
        case .folderInUse(let folder): return "the outbox folder \(folder.path) is in use by another outbox"
        case .full(let count, let bytes): return "the outbox is full (\(count) mutations, \(bytes) bytes)"
        case .notAMutation(let method): return "\(method) is a safe method, not a mutation"
        case .containsSecret(let name): return "the request sets the secret field \(name), which an outbox never writes to disk"
        case .invalidMutation(let reason): return "the mutation cannot be built: \(reason)"
        case .storageFailed(let reason): return "the outbox's folder failed: \(reason)"
        case .unknownMutation(let id): return "no mutation \(id) in the outbox"
        case .mutationInFlight(let id): return "the mutation \(id) is being sent"
        case .accountChanged(let expected): return "the mutation belongs to account \(expected), which is no longer signed in"
        case .closed: return "the outbox is closed"
        case .notSignedIn: return "the mutation needs a signed-in account, and none is signed in"
        case .credentialsUnavailable(let reason): return "the credential store cannot be read: \(reason)"
        }
    }
}
