import Foundation

/// A mutation an ``Outbox`` holds: what it sends and how it is known. The body and headers stay on disk;
/// this value is small.
public struct OutboxMutation: Sendable, Identifiable, Hashable, CustomStringConvertible {
    /// A mutation's identity in its outbox, the same across launches.
    public struct ID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The identity as text (a UUID): also the name of the mutation's files.
        public let rawValue: String

        /// The identity whose text is `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The identity as text.
        public var description: String { rawValue }
    }

    /// Where the mutation stands.
    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting to be delivered (or being delivered).
        case pending
        /// Failed for good (see ``OutboxConfiguration/isFailedForGood``): kept until retried or discarded.
        case failed
    }

    /// The mutation's identity.
    public let id: ID
    /// The key sent in ``OutboxConfiguration/idempotencyKeyHeader`` on every attempt, made once at enqueue and
    /// kept across retries and launches, so that a server that honours it applies the mutation once.
    public let idempotencyKey: String
    /// The group the mutation is delivered in order within (`nil`: the outbox's default group).
    public let group: String?
    /// The account (``Credential/account``) signed in when it was enqueued, if its endpoint needs a token:
    /// it is sent with that account's token or not at all.
    public let account: String?
    /// The request's method.
    public let method: HTTPMethod
    /// The request's URL.
    public let url: URL
    /// When it was enqueued.
    public let enqueuedAt: Date
    /// Its place in the outbox's order (increasing in enqueue order, across launches).
    public let sequence: UInt64
    /// The bytes it takes on disk (its record and its copied body).
    public let size: Int64
    /// Where it stands.
    public internal(set) var state: State
    /// Why it failed for good (a description without secrets), when it did.
    public internal(set) var failure: String?

    /// Two values are equal when they are the same mutation (identity) at the same point: the same state and
    /// failure. Every other property is fixed when the mutation is enqueued (the enqueue date read back from
    /// disk is rounded to the millisecond, so it is not compared).
    public static func == (lhs: OutboxMutation, rhs: OutboxMutation) -> Bool {
        lhs.id == rhs.id && lhs.state == rhs.state && lhs.failure == rhs.failure
    }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }

    /// The method, URL (its secret query values hidden) and identity.
    public var description: String {
        "\(method) \(Redactor().url(url)) (\(id), \(state.rawValue))"
    }
}
