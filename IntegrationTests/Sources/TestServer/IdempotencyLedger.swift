import Foundation

/// A server's side of `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header), for the outbox crash test:
/// it records every request and applies each key once.
///
/// - The first request with a key applies the mutation (at once, when it arrives), then its answer is made
///   (after the server's response delay) and stored with the key.
/// - A repeat after the answer was stored gets the stored answer again (a replay), and applies nothing.
/// - A repeat while the first is still in flight gets `409 Conflict` (the draft's §2.6: "the resource server
///   MUST respond with 409 Conflict"), and applies nothing; the client sends it again later.
/// - A request without a key, or whose body does not carry the number its path names, is refused with 400
///   and recorded.
///
/// Thread-safe and synchronous (a lock), so that a driver can poll it while requests arrive.
public final class IdempotencyLedger: @unchecked Sendable {
    // @unchecked: every stored property is read and written only under `lock`.

    /// What the server did with one request.
    public enum Disposition: String, Sendable {
        /// The key was new: the mutation was applied.
        case applied
        /// The key's answer was stored: it was sent again, nothing applied.
        case replayed
        /// The key's first request was still in flight: 409, nothing applied.
        case conflict
        /// No key, or a body that does not match the path: 400, nothing applied.
        case rejected
    }

    /// One request the server received.
    public struct Arrival: Sendable {
        /// The mutation's number, from the path.
        public let number: Int
        /// The `Idempotency-Key` it carried.
        public let key: String?
        /// What the server did with it.
        public let disposition: Disposition
    }

    /// What the ledger holds at one instant.
    public struct Snapshot: Sendable {
        /// Every request, in the order they arrived.
        public let arrivals: [Arrival]
        /// The keys each mutation number was applied under, in order (more than one is a mutation applied twice).
        public let applied: [Int: [String]]
        /// Keys whose first request is applied but not yet answered.
        public let inFlight: Int

        /// Requests whose key the server had already seen (replays and conflicts): duplicates sent.
        public var duplicates: Int { arrivals.count { $0.disposition == .replayed || $0.disposition == .conflict } }
    }

    private let lock = NSLock()
    private var arrivals: [Arrival] = []
    private var applied: [Int: [String]] = [:]
    private var answers: [String: Data] = [:]
    private var inFlight: Set<String> = []
    private var appliedCount = 0

    /// An empty ledger.
    public init() {}

    /// What the ledger holds now.
    public var snapshot: Snapshot {
        lock.withLock { Snapshot(arrivals: arrivals, applied: applied, inFlight: inFlight.count) }
    }

    /// How many requests arrived so far.
    public var requestCount: Int { lock.withLock { arrivals.count } }

    /// How many keys are applied and not yet answered.
    public var inFlightCount: Int { lock.withLock { inFlight.count } }

    /// What to answer a request that arrived.
    public enum Decision: Equatable, Sendable {
        /// Applied (the `ordinal`-th mutation applied, from 1): make the answer (after the delay) and
        /// ``finish(key:answer:)``.
        case apply(ordinal: Int)
        /// Send this stored answer again.
        case replay(Data)
        /// 409: the first request with this key is still in flight.
        case conflict
        /// 400: no key, or a body that does not match the path.
        case reject
    }

    /// Records a request for mutation `number` with `key`, whose body names `bodyNumber`, and decides its answer.
    public func receive(number: Int, key: String?, bodyNumber: Int?) -> Decision {
        lock.withLock {
            guard let key, !key.isEmpty, bodyNumber == number else {
                arrivals.append(Arrival(number: number, key: key, disposition: .rejected))
                return .reject
            }
            if let answer = answers[key] {
                arrivals.append(Arrival(number: number, key: key, disposition: .replayed))
                return .replay(answer)
            }
            if inFlight.contains(key) {
                arrivals.append(Arrival(number: number, key: key, disposition: .conflict))
                return .conflict
            }
            inFlight.insert(key)
            applied[number, default: []].append(key)
            arrivals.append(Arrival(number: number, key: key, disposition: .applied))
            appliedCount += 1
            return .apply(ordinal: appliedCount)
        }
    }

    /// Stores the answer of the request that applied `key`: later repeats get it again.
    public func finish(key: String, answer: Data) {
        lock.withLock {
            answers[key] = answer
            inFlight.remove(key)
        }
    }
}
