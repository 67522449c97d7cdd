import Foundation

extension Outbox {
    /// Starts delivering the pending mutations, in order, when connectivity allows (the provider's
    /// ``NetworkProvider/connectivity``); idempotent. Does nothing once the outbox is closed.
    public func startDelivering() {
        guard !isClosed, deliveryTask == nil else { return }
        let stream = wakeSignal.stream
        deliveryTask = Task { await self.deliverUntilClosed(wakes: stream) }
        let changes = provider.authInterceptors.map { $0.accountChanges.subscribe() }
        guard !changes.isEmpty else { return }
        accountTask = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                for change in changes {
                    group.addTask { [weak self] in
                        for await account in change { await self?.accountDidChange(to: account) }
                    }
                }
            }
        }
    }

    /// Wakes the delivery loop (a mutation was enqueued or retried, a pause ended, the account changed).
    func wake() {
        wakeSignal.continuation.yield(())
    }

    /// The delivery loop: the next deliverable mutation, sent; or a wait for a wake (no busy loop).
    private func deliverUntilClosed(wakes: AsyncStream<Void>) async {
        var wakes = wakes.makeAsyncIterator()
        while !isClosed, !Task.isCancelled {
            guard let id = await nextDeliverable() else {
                if await wakes.next() == nil { return }   // nil: cancelled
                continue
            }
            let connectivity = provider.connectivity
            if !connectivity.isOnline {
                do { try await connectivity.waitUntilOnline() } catch { return }
                continue   // the world may have changed while offline: choose again
            }
            await deliver(id)
        }
    }

    /// The pending mutation to send next: of the groups whose head (first pending mutation) is not pausing
    /// after a failure, is not behind a mutation still being written, and belongs to the account signed in,
    /// the head enqueued first. A head of another account is held or discarded (``OutboxAccountPolicy``).
    private func nextDeliverable() async -> String? {
        var candidates: [(lane: Lane, entry: Entry)] = []
        for (lane, ids) in lanes {
            guard let head = ids.lazy.compactMap({ self.entries[$0] }).first(where: { $0.record.state == .pending }) else { continue }
            if head.isBackingOff { continue }
            if let writing = writing[lane]?.min(), writing < head.record.sequence { continue }
            candidates.append((lane, head))
        }
        for (lane, head) in candidates.sorted(by: { $0.entry.record.sequence < $1.entry.record.sequence }) {
            guard let account = lane.account else { return head.record.id }
            if await isCurrent(account, for: head.record) {
                if entries[head.record.id]?.record.state == .pending { return head.record.id }
                continue   // discarded or settled while the account was read
            }
            if configuration.accountPolicy == .discard { await discardAll(of: account) }
        }
        return nil
    }

    /// Whether `account` is the one signed in with the interceptor that would attach `record`'s token.
    private func isCurrent(_ account: String, for record: OutboxRecord) async -> Bool {
        guard let url = URL(string: record.url),
            let auth = provider.authInterceptor(for: url, requiresAuthentication: record.requiresAuthentication)
        else { return true }   // no token attached: no account to match
        return ((try? await auth.currentAccount()) ?? nil) == account   // a store that cannot be read: not (yet) current
    }

    /// The signed-in account changed to `account`: its paused mutations go now; under
    /// ``OutboxAccountPolicy/discard`` every other account's mutations are discarded.
    func accountDidChange(to account: String?) async {
        for (id, entry) in entries where entry.record.account != nil && entry.record.account == account && entry.isBackingOff {
            backoffTasks.removeValue(forKey: id)?.cancel()   // its account is back: try it now
            entries[id]?.isBackingOff = false
        }
        if configuration.accountPolicy == .discard {
            let others = Set(entries.values.compactMap(\.record.account)).filter { $0 != account }
            for other in others { await discardAll(of: other) }
        }
        wake()
    }

    /// Removes every mutation of `account` (but one in flight, which its own check stops) as discarded.
    private func discardAll(of account: String) async {
        let ids = entries.values.filter { $0.record.account == account && $0.record.id != inFlight }.sorted { $0.record.sequence < $1.record.sequence }
        for entry in ids where entries[entry.record.id] != nil {
            try? await remove(entry.record.id, outcome: { .discarded($0, reason: .accountChanged) })   // a failed removal is tried again next time
        }
    }

    /// Sends the mutation `id` once through the provider's pipeline and settles it.
    private func deliver(_ id: String) async {
        guard let entry = entries[id] else { return }
        inFlight = id
        defer { inFlight = nil }
        let endpoint: OutboxDeliveryEndpoint
        let stored = await readWhole(id)
        switch stored {
        case .success(let record):
            do {
                endpoint = try OutboxDeliveryEndpoint(record, store: store, keyHeader: configuration.idempotencyKeyHeader)
            } catch {
                await markDamaged(entry, reason: "the stored request cannot be rebuilt")
                return
            }
        case .failure(let damage):
            await markDamaged(entry, reason: damage.description)
            return
        }
        do {
            let response = try await provider.response(endpoint)
            try? await remove(id, durably: false, outcome: { .delivered($0, response) })   // a record that stays is sent again, with its key
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
        if case OutboxError.accountChanged(let account) = error {
            if configuration.accountPolicy == .discard {   // this one (in flight) and the account's others
                try? await remove(id, outcome: { .discarded($0, reason: .accountChanged) })
                await discardAll(of: account)
            }
            pause(id, failures: 1)   // held: paused (no busy loop), and tried again when its account signs in
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
            if let failed = entries[id] { broadcaster.send(.failed(failed.record.mutation(size: failed.size), error)) }
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
        if case .inline = record.body, case .success(let whole) = await readWhole(record.id) { written.body = whole.body }
        do {
            let final = written
            _ = try await BlockingFileWork.run { [store] _ in try store.write(final) }
        } catch {
            throw Self.enqueueError(error)
        }
        entries[record.id]?.record = record
    }

    /// Removes the mutation `id` from the folder (`durably`: see ``OutboxStore/remove(_:durably:)``) and the
    /// outbox, then reports `outcome` of it.
    func remove(_ id: String, durably: Bool = true, outcome: (OutboxMutation) -> OutboxOutcome) async throws {
        guard let entry = entries[id] else { return }
        do {
            try await BlockingFileWork.run { [store] _ in try store.remove(entry.record, durably: durably) }
        } catch {
            throw Self.enqueueError(error)
        }
        guard entries.removeValue(forKey: id) != nil else { return }
        storedBytes -= entry.size
        if let index = lanes[entry.lane]?.firstIndex(of: id) { lanes[entry.lane]?.remove(at: index) }   // usually the head
        if lanes[entry.lane]?.isEmpty == true { lanes[entry.lane] = nil }
        backoffTasks.removeValue(forKey: id)?.cancel()
        broadcaster.send(outcome(entry.record.mutation(size: entry.size)))
    }

    /// A record that no longer reads (changed on disk after the outbox opened it): reported, not sent.
    private func markDamaged(_ entry: Entry, reason: String) async {
        guard entries.removeValue(forKey: entry.record.id) != nil else { return }
        lanes[entry.lane]?.removeAll { $0 == entry.record.id }
        let damaged = OutboxDamagedRecord(name: entry.record.id, size: Int(entry.size), reason: reason)
        damagedRecords.append(damaged)
        broadcaster.send(.damagedRecord(damaged))
    }
}
