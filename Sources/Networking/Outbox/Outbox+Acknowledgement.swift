import Foundation

extension Outbox {
    /// An outcome waiting for the removals queued before it, and the files of a delivered mutation to remove
    /// first, if any.
    struct PendingReport {
        /// The delivered mutation whose record (and body file) is removed before `outcome` is reported.
        var removing: Entry?
        var outcome: OutboxOutcome
    }

    /// Reports `outcome` on ``outcomes`` after the outcomes queued before it (so they arrive in the order
    /// they happened, a delivery's after its record was removed).
    func report(_ outcome: OutboxOutcome) {
        if reports.isEmpty, removalTask == nil {
            broadcaster.send(outcome)
        } else {
            reports.append(PendingReport(removing: nil, outcome: outcome))
        }
    }

    /// The server accepted the mutation `id`: it leaves the outbox's bookkeeping now (its group's next may
    /// go at once), and its record and body file are removed off the delivery path, in batches, before it
    /// is reported delivered. Until then it still counts against the bounds. A kill before the removal
    /// leaves the record on disk: the next outbox sends it again with its key, which the server answers as
    /// before (the contract of an acknowledged record; see ``OutboxStore/remove(_:durably:)``).
    func acknowledge(_ id: String, response: Response) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.isWhole, case .inline(let data) = entry.record.body { inlineBudget += Int64(data.count) }
        lanes[entry.lane]?.remove(id)
        if lanes[entry.lane]?.isEmpty == true { lanes[entry.lane] = nil }
        backoffTasks.removeValue(forKey: id)?.cancel()
        removingCount += 1
        reports.append(PendingReport(removing: entry, outcome: .delivered(entry.record.mutation(size: entry.size), response)))
        if removalTask == nil { removalTask = Task { await self.removeAcknowledged() } }
    }

    /// Removes the files of the delivered mutations queued, a batch at a time (one hop to the blocking
    /// queue for all the records acknowledged meanwhile), then reports the batch's outcomes in order.
    private func removeAcknowledged() async {
        while !reports.isEmpty {
            let batch = reports   // kept in `reports` (listed in `pending`) until reported
            let records = batch.compactMap { $0.removing?.record }
            let outcomes = batch.map(\.outcome)
            if records.isEmpty {
                for outcome in outcomes { broadcaster.send(outcome) }
            } else {
                do {
                    try await BlockingFileWork.run { [store, broadcaster] _ in
                        for record in records {
                            // A record not removed (the disk refused) stays: the next outbox sends it again with
                            // its key, which the server answers as before. Reported delivered all the same.
                            do { try store.remove(record, durably: false) } catch {}
                        }
                        // Reported once removed, and before `pending` stops listing them (back on the actor).
                        for outcome in outcomes { broadcaster.send(outcome) }
                    }
                } catch {}   // the work above does not throw
            }
            reports.removeFirst(batch.count)   // those queued meanwhile stay, for the next batch
            for report in batch {
                guard let removed = report.removing else { continue }
                storedBytes -= removed.size
                removingCount -= 1
            }
        }
        removalTask = nil
    }

    /// Waits until every delivered mutation's files are removed and its outcome reported (closing).
    func drainAcknowledged() async {
        while let task = removalTask { await task.value }
    }
}
