import Foundation

extension Outbox {
    /// Starts delivering the pending mutations, in order, when connectivity allows (the provider's
    /// ``NetworkProvider/connectivity``); idempotent. Does nothing once the outbox is closed.
    public func startDelivering() {
        guard !isClosed, deliveryTask == nil else { return }
        let stream = wakeSignal.stream
        deliveryTask = Task { await self.deliverUntilClosed(wakes: stream) }
        let changes = provider.authInterceptors.map { ($0, $0.accountChanges.subscribe()) }
        guard !changes.isEmpty else { return }
        accountTask = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                for (auth, change) in changes {
                    group.addTask { [weak self] in
                        for await account in change { await self?.accountDidChange(to: account, with: auth) }
                    }
                }
            }
        }
    }

    /// Wakes the delivery loop (a mutation was enqueued or retried, a pause ended, the account changed).
    func wake() {
        wakeSignal.continuation.yield(())
    }

    /// The delivery loop: while a sender's slot is free, the next deliverable mutation is given to a new
    /// sender; otherwise a wait for a wake (no busy loop).
    private func deliverUntilClosed(wakes: AsyncStream<Void>) async {
        var wakes = wakes.makeAsyncIterator()
        while !isClosed, !Task.isCancelled {
            guard senders.count < Self.maximumConcurrentSends, let id = await claimNextDeliverable() else {
                if senders.isEmpty { removeDeliveredFiles() }   // idle: the delivered mutations' files go now
                if await wakes.next() == nil { return }   // nil: cancelled
                continue
            }
            let connectivity = provider.connectivity
            if !connectivity.isOnline {
                inFlight.remove(id)   // not sent now: chosen again once online
                if senders.isEmpty { removeDeliveredFiles() }   // idle while offline: the delivered mutations' files go now
                do {
                    try await connectivity.waitUntilOnline()
                } catch {
                    if isClosed || Task.isCancelled { return }
                    do { try await configuration.sleep(configuration.retryDelay(1)) } catch { return }   // a custom wait failed: try again later
                }
                continue   // the world may have changed while offline: choose again
            }
            guard !isClosed, !Task.isCancelled else {
                inFlight.remove(id)
                return
            }
            let number = nextSender
            nextSender += 1
            senders[number] = Task { await self.send(startingWith: id, sender: number) }
        }
    }

    /// How many groups send at once: one request that hangs does not hold the other groups.
    static let maximumConcurrentSends = 4

    /// A sender: delivers `first`, then, while online, the next deliverable mutation of any group (the same
    /// choice the loop makes), one at a time, with no new task and no round trip through the loop a
    /// delivery; ends when nothing is deliverable (the loop is woken to look again).
    private func send(startingWith first: String, sender: Int) async {
        var next: String? = first
        while let id = next {
            await deliver(id)
            next = nil
            guard !isClosed, !Task.isCancelled, provider.connectivity.isOnline else { break }   // offline: the loop waits
            // Another group may have become deliverable while the slots were full: the loop fills a free one.
            if lanes.count > 1, senders.count < Self.maximumConcurrentSends { wake() }
            next = await claimNextDeliverable()
        }
        senders[sender] = nil
        wake()   // a slot is free
    }

    /// The pending mutation to send next, claimed (in ``inFlight``: no other sender takes it): of the groups
    /// whose head (first pending mutation) is not pausing after a failure, is not behind a mutation still
    /// being written, and belongs to the account signed in, the head enqueued first. A head of another
    /// account is held or discarded (``OutboxAccountPolicy``).
    private func claimNextDeliverable() async -> String? {
        guard let id = await nextDeliverable(), !inFlight.contains(id) else { return nil }
        inFlight.insert(id)
        return id
    }

    private func nextDeliverable() async -> String? {
        var candidates: [(lane: Lane, entry: Entry)] = []
        for (lane, queue) in lanes {
            guard let head = queue.all.lazy.compactMap({ self.entries[$0] }).first(where: { $0.record.state == .pending }) else { continue }
            if head.isBackingOff || busy.contains(head.record.id) || inFlight.contains(head.record.id) { continue }
            if let writing = writing[lane]?.min(), writing < head.record.sequence { continue }
            candidates.append((lane, head))
        }
        for (lane, head) in candidates.sorted(by: { $0.entry.record.sequence < $1.entry.record.sequence }) {
            guard let account = lane.account else { return head.record.id }
            let auth = interceptor(of: head.record)
            switch await match(account, with: auth) {
            case .current:
                let id = head.record.id
                if entries[id]?.record.state == .pending, !busy.contains(id), !inFlight.contains(id) { return id }
                continue   // discarded or settled while the account was read
            case .another:
                if configuration.accountPolicy == .discard, let auth { await discardAll(of: account, with: auth) }
            case .unknown:
                // Nobody signed in, the session expired, or the store cannot be read: held (unless that account
                // was signed out of this interceptor under `.discard`).
                if configuration.accountPolicy == .discard, isDismissed(head.record), let auth { await discardAll(of: account, with: auth) }
            }
        }
        return nil
    }

    /// Sends the mutation `id` once through the provider's pipeline and settles it.
    private func deliver(_ id: String) async {
        defer { inFlight.remove(id) }   // its sender chooses next, or wakes the loop
        guard let entry = entries[id] else { return }
        let endpoint: OutboxDeliveryEndpoint
        let stored = entry.isWhole ? .success(entry.record) : await readWhole(id)   // a small body is in memory: no read
        switch stored {
        case .success(let record):
            do {
                endpoint = try OutboxDeliveryEndpoint(record, store: store, keyHeader: configuration.idempotencyKeyHeader)
            } catch {
                await markDamaged(entry, reason: "the stored request cannot be rebuilt")
                return
            }
        case .failure(.unreadable):
            entries[id]?.failures += 1   // a read error is not damage: the group waits for it, in order
            pause(id, failures: entries[id]?.failures ?? 1)
            return
        case .failure(let damage):
            await markDamaged(entry, reason: damage.description)
            return
        }
        do {
            let response = try await provider.response(endpoint)
            acknowledge(id, response: response)   // its files removed off this path, then reported
        } catch {
            await settle(id, after: error)
        }
    }

    private func readWhole(_ id: String) async -> Result<OutboxRecord, DurableRecord.Damage> {
        do {
            return try await BlockingFileWork.run { [store] _ in store.read(id) }
        } catch {
            return .failure(.unreadable(errno: EIO))
        }
    }

    /// A failed delivery: cancelled (stays pending), another account's (held or discarded), failed for
    /// good (moved to ``failed``) or transient (paused, then tried again).
    private func settle(_ id: String, after error: any Error) async {
        guard var entry = entries[id] else { return }
        if isClosed || Task.isCancelled { return }   // closing: it stays pending, sent again by the next outbox
        if case OutboxError.accountChanged = error {
            if configuration.accountPolicy == .discard, isDismissed(entry.record) {   // its account was signed out
                do {
                    try await remove(id, outcome: { .discarded($0, reason: .accountChanged) })
                    return
                } catch {}   // held: tried again
            }
            // Held: paused (no busy loop), tried again when its account signs in; under `.discard` it is
            // discarded once another account is known to be signed in (never on a store error or expiry).
            pause(id, failures: 1)
            return
        }
        if configuration.isFailedForGood(error) {
            var record = entry.record
            record.state = .failed
            record.failure = Redactor().error(error)
            do {
                try await rewrite(record)
            } catch {
                entries[id]?.record = record   // kept failed in memory; on disk it is pending and is tried again next launch
            }
            if let failed = entries[id] { report(.failed(failed.record.mutation(size: failed.size), error)) }
            return
        }
        entry.failures += 1
        entries[id] = entry
        pause(id, failures: entry.failures)
    }

    /// Keeps the mutation `id` from being chosen for ``OutboxConfiguration/retryDelay`` after its
    /// `failures`-th failure (cancellable: ``Outbox/retry(_:)``, an account change or closing ends it).
    private func pause(_ id: String, failures: Int) {
        entries[id]?.isBackingOff = true
        let delay = configuration.retryDelay(failures)
        let sleep = configuration.sleep
        backoffTasks[id]?.cancel()
        backoffTasks[id] = Task { [weak self] in
            do { try await sleep(delay) } catch { return }
            await self?.endBackoff(id)
        }
    }

    private func endBackoff(_ id: String) {
        backoffTasks[id] = nil
        entries[id]?.isBackingOff = false
        wake()
    }

    /// Writes `record` over its earlier version and keeps it.
    func rewrite(_ record: OutboxRecord) async throws {
        var written = record
        if entries[record.id]?.isWhole == false {   // its inline body is on disk only: never rewritten without it
            switch await readWhole(record.id) {
            case .success(let whole): written.body = whole.body
            case .failure(let damage): throw OutboxError.storageFailed("read \(record.id): \(damage)")
            }
        }
        do {
            let final = written
            _ = try await BlockingFileWork.run { [store] _ in try store.write(final) }
        } catch {
            throw Self.enqueueError(error)
        }
        entries[record.id]?.record = record
    }

    /// Removes the mutation `id` from the folder, durably (a discard must never come back), and from the
    /// outbox, then reports `outcome` of it.
    /// - Throws: ``OutboxError/mutationInFlight(_:)`` while a retry or another removal works on its file.
    func remove(_ id: String, outcome: (OutboxMutation) -> OutboxOutcome) async throws {
        guard let entry = entries[id] else { return }
        guard busy.insert(id).inserted else { throw OutboxError.mutationInFlight(OutboxMutation.ID(rawValue: id)) }
        defer { busy.remove(id) }
        do {
            try await BlockingFileWork.run { [store] _ in try store.remove(entry.record) }
        } catch {
            throw Self.enqueueError(error)
        }
        forget(id, outcome: outcome)
    }

    /// Drops the mutation `id` from the outbox (not from the folder), reports `outcome` of it and wakes the
    /// delivery loop (the next of its group may go).
    func forget(_ id: String, outcome: (OutboxMutation) -> OutboxOutcome) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        if entry.isWhole, case .inline(let data) = entry.record.body { inlineBudget += Int64(data.count) }
        storedBytes -= entry.size
        lanes[entry.lane]?.remove(id)
        if lanes[entry.lane]?.isEmpty == true { lanes[entry.lane] = nil }
        backoffTasks.removeValue(forKey: id)?.cancel()
        report(outcome(entry.record.mutation(size: entry.size)))
        wake()
    }

    /// A record that no longer reads (changed on disk after the outbox opened it): reported, not sent.
    private func markDamaged(_ entry: Entry, reason: String) async {
        guard entries.removeValue(forKey: entry.record.id) != nil else { return }
        lanes[entry.lane]?.remove(entry.record.id)
        if lanes[entry.lane]?.isEmpty == true { lanes[entry.lane] = nil }
        let damaged = OutboxDamagedRecord(name: entry.record.id, size: Int(entry.size), reason: reason)
        damagedRecords.append(damaged)
        report(.damagedRecord(damaged))
    }
}
