import Foundation

/// What an ``Outbox`` does with the mutations of an account that signs out or is switched away from.
public enum OutboxAccountPolicy: Sendable, Equatable {
    /// Keep them, unsent, until the account is signed in again (the default).
    case hold
    /// Remove them, each reported as ``OutboxOutcome/discarded(_:reason:)`` with
    /// ``OutboxDiscardReason/accountChanged``.
    case discard
}

/// How an ``Outbox`` bounds, names and retries its mutations.
public struct OutboxConfiguration: Sendable {
    /// The most mutations the outbox holds (pending and failed); ``Outbox/enqueue(_:group:)`` throws
    /// ``OutboxError/full(count:bytes:)`` above it. Default 10,000.
    public var maximumCount: Int
    /// The most bytes the outbox holds on disk (records and copied bodies). Default 100 MB.
    public var maximumBytes: Int64
    /// The header a mutation's idempotency key is sent in. Default `Idempotency-Key`
    /// (draft-ietf-httpapi-idempotency-key-header).
    public var idempotencyKeyHeader: String
    /// What happens to an account's mutations when it signs out or another account signs in.
    public var accountPolicy: OutboxAccountPolicy
    /// Whether an error of a delivery ends the mutation for good (it moves to ``Outbox/failed``) rather than
    /// being retried later. Default ``isFailedForGoodByDefault(_:)``.
    public var isFailedForGood: @Sendable (any Error) -> Bool
    /// The pause before the next try of a mutation whose `failures`-th delivery failed transiently.
    /// Default ``backoffByDefault(failures:)``.
    public var retryDelay: @Sendable (_ failures: Int) -> TimeInterval
    /// How the outbox waits (between retries): `Task.sleep`; the package's tests set their own.
    package var sleep: @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep

    /// A configuration; every parameter has the default described on its property.
    public init(
        maximumCount: Int = 10_000,
        maximumBytes: Int64 = 100 * 1_024 * 1_024,
        idempotencyKeyHeader: String = "Idempotency-Key",
        accountPolicy: OutboxAccountPolicy = .hold,
        isFailedForGood: @escaping @Sendable (any Error) -> Bool = { OutboxConfiguration.isFailedForGoodByDefault($0) },
        retryDelay: @escaping @Sendable (_ failures: Int) -> TimeInterval = { OutboxConfiguration.backoffByDefault(failures: $0) }
    ) {
        self.maximumCount = max(1, maximumCount)
        self.maximumBytes = max(1, maximumBytes)
        self.idempotencyKeyHeader = idempotencyKeyHeader
        self.accountPolicy = accountPolicy
        self.isFailedForGood = isFailedForGood
        self.retryDelay = retryDelay
    }

    /// The default rule: a 4xx status other than 408, 409, 425 and 429 (the request itself is refused:
    /// RFC 9110 §15.5; those four say "later"), a rejected refresh or an expired session (the account must
    /// sign in again), a request that cannot be built, and a refused server certificate. Anything else —
    /// no network, a timeout, a 5xx, the deadline — is transient: the mutation is tried again.
    public static func isFailedForGoodByDefault(_ error: any Error) -> Bool {
        switch error {
        case NetworkError.invalidStatusCode(let status):
            return (400..<500).contains(status) && ![408, 409, 425, 429].contains(status)
        case NetworkError.tooManyAttempts(_, let last):
            return isFailedForGoodByDefault(last)
        case NetworkError.refreshFailed(let cause):
            return AuthInterceptor.isRefreshTokenRejection(cause)
        case NetworkError.sessionExpired, NetworkError.invalidURL, NetworkError.invalidRequest,
            NetworkError.encodingFailed, NetworkError.pinMismatch, NetworkError.unenforceablePins, NetworkError.insecureRedirect,
            NetworkError.redirectWouldForwardBody:
            return true
        default:
            return false
        }
    }

    /// The default pause: 1 s after the first failure, doubling to at most 5 minutes, with up to 20 %
    /// random jitter so that many devices do not come back at the same instant.
    public static func backoffByDefault(failures: Int) -> TimeInterval {
        let base = min(300, pow(2, Double(max(0, min(failures, 20) - 1))))
        return base * Double.random(in: 0.8...1.0)
    }
}
