import Foundation

extension Outbox {
    /// Moves a failed mutation back to pending (at its place in its group's order) and tries it again now;
    /// a pending mutation waiting out a pause after a transient failure is tried now.
    /// - Throws: ``OutboxError/unknownMutation(_:)``; ``OutboxError/mutationInFlight(_:)`` while it is
    ///   being rewritten or removed; ``OutboxError/storageFailed(_:)``; ``OutboxError/closed``.
    public func retry(_ id: OutboxMutation.ID) async throws {
        guard !isClosed else { throw OutboxError.closed }
        guard var entry = entries[id.rawValue] else { throw OutboxError.unknownMutation(id) }
        guard !busy.contains(id.rawValue) else { throw OutboxError.mutationInFlight(id) }
        if entry.record.state == .failed {
            var record = entry.record
            record.state = .pending
            record.failure = nil
            busy.insert(id.rawValue)
            defer { busy.remove(id.rawValue) }
            try await rewrite(record)
            guard let current = entries[id.rawValue] else { throw OutboxError.unknownMutation(id) }
            entry = current
        }
        entry.failures = 0
        entry.isBackingOff = false
        entries[id.rawValue] = entry
        backoffTasks.removeValue(forKey: id.rawValue)?.cancel()
        wake()
    }

    /// Removes a mutation unsent (pending or failed), reported as ``OutboxOutcome/discarded(_:reason:)``.
    /// - Throws: ``OutboxError/mutationInFlight(_:)`` while it is being sent, rewritten or removed;
    ///   ``OutboxError/unknownMutation(_:)``; ``OutboxError/storageFailed(_:)``; ``OutboxError/closed``.
    public func discard(_ id: OutboxMutation.ID) async throws {
        guard !isClosed else { throw OutboxError.closed }
        guard entries[id.rawValue] != nil else { throw OutboxError.unknownMutation(id) }
        guard !inFlight.contains(id.rawValue), !busy.contains(id.rawValue) else { throw OutboxError.mutationInFlight(id) }
        try await remove(id.rawValue, outcome: { .discarded($0, reason: .requested) })
    }

    /// Removes a damaged record's file and its body file (see ``damaged``).
    /// - Throws: ``OutboxError/storageFailed(_:)``; ``OutboxError/closed``.
    public func removeDamaged(_ record: OutboxDamagedRecord) async throws {
        guard !isClosed else { throw OutboxError.closed }
        guard damagedRecords.contains(record) else { return }
        do {
            try await BlockingFileWork.run { [store] _ in try store.removeDamaged(record.name) }
        } catch {
            throw Self.enqueueError(error)
        }
        if let index = damagedRecords.firstIndex(of: record) {
            damagedRecords.remove(at: index)
            storedBytes -= Int64(record.size)
        }
    }
}
