import Foundation

extension Outbox {
    /// An outcome waiting for the outcomes queued before it, and the files of a delivered mutation to
    /// remove first, if any.
    struct PendingReport {
        /// The delivered mutation whose record (and body file) is removed before `outcome` is reported.
        var removing: Entry?
        var outcome: OutboxOutcome
    }

    /// Reports `outcome` on ``outcomes`` after the outcomes queued before it (so they arrive in the order
    /// they happened, a delivery's after it was acknowledged on disk).
    func report(_ outcome: OutboxOutcome) {
        if reports.isEmpty, removalTask == nil {
            broadcaster.send(outcome)
        } else {
            reports.append(PendingReport(removing: nil, outcome: outcome))
        }
    }

    /// The server accepted the mutation `id`: it leaves the outbox's bookkeeping now (its group's next may
    /// go at once), is acknowledged on disk by its name in the delivered log (``OutboxDeliveredLog``: one
    /// short write, no flush) and reported delivered. Its record and body files are removed later, many at
    /// once, when the outbox is idle or closes, or once ``removalBatchBytes`` or ``removalBatchCount`` wait.
    /// When the log cannot be written, or outcomes wait before this one, its files are removed off this
    /// path before it is reported (until then it still counts against the bounds). A kill before either
    /// leaves the record pending: the next outbox sends it again with its key, which the server answers as
    /// before (the contract of an acknowledged record).
    func acknowledge(_ id: String, response: Response) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.isWhole, case .inline(let data) = entry.record.body { inlineBudget += Int64(data.count) }
        lanes[entry.lane]?.remove(id)
        if lanes[entry.lane]?.isEmpty == true { lanes[entry.lane] = nil }
        backoffTasks.removeValue(forKey: id)?.cancel()
        let outcome = OutboxOutcome.delivered(entry.record.mutation(size: entry.size), response)
        if reports.isEmpty, removalTask == nil, logDelivered(entry) {
            storedBytes -= entry.size
            broadcaster.send(outcome)
            if awaitingRemovalBytes >= Self.removalBatchBytes || awaitingRemoval.count >= Self.removalBatchCount { removeDeliveredFiles() }
            return
        }
        removingCount += 1
        reports.append(PendingReport(removing: entry, outcome: outcome))
        if removalTask == nil { removalTask = Task { await self.removeAcknowledged() } }
    }

    /// While the outbox delivers, delivered mutations' files wait for their removal up to this many bytes...
    static let removalBatchBytes: Int64 = 4 * 1_024 * 1_024
    /// ...or this many mutations.
    static let removalBatchCount = 10_000

    /// Appends the name of `entry` to the delivered log; `false` when it cannot be written.
    private func logDelivered(_ entry: Entry) -> Bool {
        do {
            try store.delivered.append(entry.record.id)
        } catch {
            return false   // its files are removed before it is reported instead
        }
        awaitingRemoval.append(OutboxStore.RecordFiles(entry.record))
        awaitingRemovalBytes += entry.size
        return true
    }

    /// Removes the files of the delivered mutations queued in ``reports``, a batch at a time (one hop to
    /// the blocking queue for all the mutations acknowledged meanwhile), then reports the batch's outcomes
    /// in order.
    private func removeAcknowledged() async {
        while !reports.isEmpty {
            let batch = reports   // kept in `reports` (listed in `pending`) until reported
            let files = batch.compactMap { $0.removing.map { OutboxStore.RecordFiles($0.record) } }
            let outcomes = batch.map(\.outcome)
            if files.isEmpty {
                for outcome in outcomes { broadcaster.send(outcome) }
            } else {
                do {
                    try await BlockingFileWork.run { [store, broadcaster] _ in
                        for file in files {
                            // A record not removed (the disk refused) stays: the next outbox sends it again with
                            // its key, which the server answers as before. Reported delivered all the same.
                            do { try store.remove(file, durably: false) } catch {}
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

    /// Removes the files of the mutations acknowledged in the delivered log, off the actor (the outbox is
    /// idle or closes, or enough wait), then leaves in the log only those acknowledged meanwhile.
    func removeDeliveredFiles() {
        guard cleanupTask == nil, !awaitingRemoval.isEmpty else { return }
        let files = awaitingRemoval
        awaitingRemoval = []
        awaitingRemovalBytes = 0
        cleanupTask = Task { await self.remove(files) }
    }

    private func remove(_ files: [OutboxStore.RecordFiles]) async {
        var removedAll = false
        do {
            removedAll = try await BlockingFileWork.run { [store] _ in
                var removedAll = true
                for file in files {
                    do { try store.remove(file, durably: false) } catch { removedAll = false }
                }
                return removedAll
            }
        } catch {}   // the work above does not throw
        // The log keeps the names appended meanwhile only (their files are not removed yet). It is kept whole when a
        // file stays or the log cannot be rewritten; a later replacement drops the name of a file that stayed, and
        // the next opening sends that mutation again with its key (a duplicate at worst, never a loss).
        if removedAll {
            do { try store.delivered.replace(with: awaitingRemoval.map(\.name)) } catch {}
        }
        cleanupTask = nil
        // Acknowledged while this removal ran: the idle point or the limit they met found it busy.
        let due = awaitingRemovalBytes >= Self.removalBatchBytes || awaitingRemoval.count >= Self.removalBatchCount
        if senders.isEmpty || due { removeDeliveredFiles() }
    }

    /// Waits until every delivered mutation is reported and its files removed (closing), and closes the
    /// delivered log.
    func drainAcknowledged() async {
        while let task = removalTask { await task.value }
        if let task = cleanupTask { await task.value }
        removeDeliveredFiles()
        if let task = cleanupTask { await task.value }
        store.delivered.close()
    }
}
