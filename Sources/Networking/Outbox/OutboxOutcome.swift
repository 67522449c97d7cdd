import Foundation

/// Why an ``Outbox`` removed a mutation without delivering it.
public enum OutboxDiscardReason: Sendable, Equatable {
    /// The app asked (``Outbox/discard(_:)``).
    case requested
    /// Its account signed out or was switched away from, under ``OutboxAccountPolicy/discard``.
    case accountChanged
}

/// A file of the outbox's folder that should hold a mutation but does not decode: torn by a crash during a
/// write the file system did not make atomic, changed on disk, or written by a later format. It is skipped
/// (the mutations around it are not affected) and left in place until ``Outbox/removeDamaged(_:)``.
public struct OutboxDamagedRecord: Sendable, Hashable, CustomStringConvertible {
    /// The file's name (without its extension): the mutation's identity when it was one.
    public let name: String
    /// The file's size in bytes.
    public let size: Int
    /// Why it does not decode.
    public let reason: String

    /// The name and the reason.
    public var description: String { "\(name): \(reason)" }
}

/// What happened to a mutation, as reported on ``Outbox/outcomes``.
public enum OutboxOutcome: Sendable {
    /// The server accepted it (the endpoint's acceptable statuses): it is gone from the outbox.
    case delivered(OutboxMutation, Response)
    /// It failed for good (``OutboxConfiguration/isFailedForGood``): it stays in ``Outbox/failed`` until
    /// retried or discarded; the mutations after it in its group go on.
    case failed(OutboxMutation, any Error)
    /// It was removed unsent.
    case discarded(OutboxMutation, reason: OutboxDiscardReason)
    /// A record that does not decode was found when the outbox opened its folder.
    case damagedRecord(OutboxDamagedRecord)
    /// `count` outcomes before the next one were dropped unheard: more happened while nobody listened than
    /// ``OutboxOutcomes`` keeps (the last 100), or this listener fell more than 1,000 behind. The mutations
    /// themselves are not affected: a delivered one is matched by its idempotency key (see Offline.md).
    case outcomesDropped(count: Int)
}
