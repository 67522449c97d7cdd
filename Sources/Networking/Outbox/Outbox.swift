import Foundation

/// A durable queue of writes: the app hands it mutations (`POST`, `PUT`, `PATCH`, `DELETE` with any body),
/// and it delivers each one once, in order, through the provider's whole pipeline, across network loss,
/// app kills and relaunches.
///
/// - **Durable**: ``enqueue(_:group:)`` returns once the mutation is on disk (its record written to a
///   temporary file, flushed, renamed into place and the folder flushed; a file body or multipart form
///   copied into the outbox's folder first), with an idempotency key made then and kept forever.
/// - **Once**: every attempt carries the key in ``OutboxConfiguration/idempotencyKeyHeader``; a mutation
///   leaves the folder only after the server accepted it, so one in flight when the process dies is sent
///   again at the next launch with the same key, and a server that honours the key applies it once.
/// - **In order**: within a group (``enqueue(_:group:)``; `nil` is the default group) and an account, one
///   mutation at a time, in enqueue order; groups do not wait for each other (up to four groups send at
///   once, so a request that hangs in one group does not hold the others). A mutation that fails for good
///   moves to ``failed`` and the next one goes on; a transient failure keeps it at the head of its group
///   and it is tried again after a pause (``OutboxConfiguration/retryDelay``).
/// - **An account's**: a mutation is sent with the token of the account signed in when it was enqueued,
///   never another's (``OutboxError/accountChanged(expected:)``); see ``OutboxAccountPolicy``.
/// - **Bounded, owned, tolerant**: see ``OutboxConfiguration``, ``OutboxError/folderInUse(_:)`` and
///   ``OutboxDamagedRecord``.
///
/// ```swift
/// let outbox = try await Outbox(folder: folder, provider: provider)
/// await outbox.startDelivering()
/// try await outbox.enqueue(CreateNote(text: "Hello"), group: "notes")
/// for await outcome in outbox.outcomes { ... }
/// ```
public actor Outbox {
    /// A mutation as the outbox tracks it.
    struct Entry {
        var record: OutboxRecord
        var size: Int64
        /// Whether `record` holds its inline body (sent with no read); otherwise it is read when sent.
        var isWhole: Bool
        var failures = 0
        var isBackingOff = false
        var lane: Lane { Lane(account: record.account, group: record.group) }
    }

    /// Mutations delivered in order among themselves: one account's, in one group.
    struct Lane: Hashable {
        let account: String?
        let group: String?
    }

    /// The folder the outbox keeps its mutations in.
    public nonisolated let folder: URL
    /// The outbox's bounds and rules.
    public nonisolated let configuration: OutboxConfiguration
    nonisolated let provider: NetworkProvider
    nonisolated let store: OutboxStore
    nonisolated let broadcaster: Broadcaster<OutboxOutcome>
    private nonisolated let lock: DurableFolderLock

    var entries: [String: Entry] = [:]
    var lanes: [Lane: LaneQueue] = [:]   // ids in sequence order
    var writing: [Lane: Set<UInt64>] = [:]   // sequences reserved by enqueues still writing
    var reservedBytes: Int64 = 0
    var inlineBudget: Int64 = 8 * 1_024 * 1_024   // inline bodies kept in memory, at most
    var reservedCount = 0
    var storedBytes: Int64 = 0
    var nextSequence: UInt64 = 1
    var damagedRecords: [OutboxDamagedRecord]
    var inFlight: Set<String> = []   // the mutations being sent (claimed by a sender): at most one a lane
    var senders: [Int: Task<Void, Never>] = [:]   // at most maximumConcurrentSends
    var nextSender = 0
    var reports: [PendingReport] = []   // outcomes behind the removal of delivered mutations' files
    var removalTask: Task<Void, Never>?
    var removingCount = 0   // delivered mutations whose files are removed before they are reported
    var awaitingRemoval: [OutboxStore.RecordFiles] = []   // acknowledged in the delivered log, files not yet removed
    var awaitingRemovalBytes: Int64 = 0
    var cleanupTask: Task<Void, Never>?   // removing the files of `awaitingRemoval` taken
    var dismissed: Set<Dismissal> = []   // under `.discard`: the accounts signed out of an interceptor
    var busy: Set<String> = []   // mutations whose file a retry or a removal is rewriting or removing
    var isClosed = false
    var deliveryTask: Task<Void, Never>?
    var accountTask: Task<Void, Never>?
    var backoffTasks: [String: Task<Void, Never>] = [:]
    var writesInProgress = 0
    var writesDone: [CheckedContinuation<Void, Never>] = []
    let wakeSignal = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// Opens (creating if needed) the outbox stored in `folder`, for `provider`'s pipeline.
    ///
    /// Reads every record, off the caller's thread and one file at a time: the mutations not yet delivered are pending again (in their order, with their
    /// keys); records that do not decode are skipped, listed in ``damaged`` and reported on ``outcomes``.
    /// Nothing is sent until ``startDelivering()``.
    ///
    /// - Throws: ``OutboxError/folderInUse(_:)`` when another outbox, in this process or another, has the
    ///   folder open; ``OutboxError/storageFailed(_:)`` when it cannot be created or read (a record that
    ///   cannot be read now, such as a file protected while the device is locked, is no damage: try again
    ///   later).
    public init(folder: URL, provider: NetworkProvider, configuration: OutboxConfiguration = OutboxConfiguration()) async throws {
        try await self.init(store: OutboxStore(folder: folder), provider: provider, configuration: configuration)
    }

    /// The outbox of `store`'s folder (a test's store removes files its own way).
    init(store: OutboxStore, provider: NetworkProvider, configuration: OutboxConfiguration) async throws {
        let folder = store.folder
        self.folder = folder
        self.provider = provider
        self.configuration = configuration
        self.store = store
        do {
            lock = try DurableFolderLock(folder: folder.standardizedFileURL.path)
        } catch .folderInUse {
            throw OutboxError.folderInUse(folder)
        } catch {
            throw OutboxError.storageFailed(error.description)
        }
        let contents: OutboxStore.Contents
        let budget = inlineBudget
        do {
            contents = try await BlockingFileWork.run { _ in try store.open(inlineBudget: budget) }
        } catch {
            lock.release()
            throw OutboxError.storageFailed((error as? DurabilityError)?.description ?? Redactor().error(error))
        }
        damagedRecords = contents.damaged
        broadcaster = Broadcaster(backlogLimit: OutboxOutcomes.backlogLimit + contents.damaged.count, bufferLimit: OutboxOutcomes.bufferLimit)
        for loaded in contents.records.sorted(by: { $0.record.sequence < $1.record.sequence }) {
            let entry = Entry(record: loaded.record, size: loaded.size, isWhole: loaded.isWhole)
            if loaded.isWhole, case .inline(let data) = loaded.record.body { inlineBudget -= Int64(data.count) }
            entries[loaded.record.id] = entry
            lanes[entry.lane, default: LaneQueue()].append(loaded.record.id)
            storedBytes += loaded.size
            nextSequence = max(nextSequence, loaded.record.sequence + 1)
        }
        for damaged in contents.damaged {
            storedBytes += Int64(damaged.size)
            broadcaster.send(.damagedRecord(damaged))
        }
    }

    /// The outcomes of the mutations as they happen (see ``OutboxOutcomes``).
    public nonisolated var outcomes: OutboxOutcomes {
        OutboxOutcomes(broadcaster: broadcaster)
    }

    /// The mutations waiting to be delivered (the one in flight included, and one delivered until its
    /// ``OutboxOutcome/delivered(_:_:)`` is reported), in enqueue order.
    public var pending: [OutboxMutation] { mutations(in: .pending) }

    /// The mutations that failed for good, in enqueue order: ``retry(_:)`` or ``discard(_:)`` them.
    public var failed: [OutboxMutation] { mutations(in: .failed) }

    /// The records found damaged when the folder was opened and not yet removed (``removeDamaged(_:)``).
    public var damaged: [OutboxDamagedRecord] { damagedRecords }

    private func mutations(in state: OutboxMutation.State) -> [OutboxMutation] {
        var found = entries.values.filter { $0.record.state == state }
        if state == .pending { found += reports.compactMap(\.removing) }   // delivered, not yet reported: still listed
        return found.sorted { $0.record.sequence < $1.record.sequence }.map { $0.record.mutation(size: $0.size) }
    }

    /// Persists `endpoint`'s mutation and returns it; it is delivered after the mutations enqueued before
    /// it in `group` (`nil`: the default group), once ``startDelivering()`` was called and the network allows.
    ///
    /// When this returns, the mutation is on disk: a crash, a kill or a power loss after it does not lose
    /// it. A file body (``RequestBody/file(_:contentType:)``) or multipart form is copied into the outbox's
    /// folder: the app may delete its source. The key is the endpoint's own `Idempotency-Key` header (the
    /// configured name) when it sets one, otherwise a new UUID.
    ///
    /// - Throws: ``OutboxError/full(count:bytes:)`` when the outbox is full (nothing is dropped);
    ///   ``OutboxError/notAMutation(_:)``, ``OutboxError/containsSecret(name:)``,
    ///   ``OutboxError/invalidMutation(_:)``, ``OutboxError/storageFailed(_:)``, ``OutboxError/closed``,
    ///   ``OutboxError/notSignedIn`` or ``OutboxError/credentialsUnavailable(_:)`` (an endpoint that needs an
    ///   ``AuthInterceptor``'s token when no account is known), or
    ///   ``NetworkError/cancelled`` when the calling task is cancelled before the mutation was persisted.
    @discardableResult
    public func enqueue(_ endpoint: some Endpoint, group: String? = nil) async throws -> OutboxMutation {
        guard !isClosed else { throw OutboxError.closed }
        var snapshot = try OutboxSnapshot(of: endpoint, provider: provider, idempotencyKeyHeader: configuration.idempotencyKeyHeader)
        let url = URL(string: snapshot.record.url)
        if let url, let auth = provider.authInterceptor(for: url, requiresAuthentication: snapshot.record.requiresAuthentication) {
            let account: String?
            do {
                account = try await auth.currentAccount()
            } catch {
                throw OutboxError.credentialsUnavailable(Redactor().error(error))
            }
            guard let account else { throw OutboxError.notSignedIn }   // never sent later with whoever signs in next
            snapshot.record.account = account
        }
        guard !isClosed else { throw OutboxError.closed }
        var estimated = snapshot.estimatedBodySize + 1_024   // reserved until written; the exact size once known
        try checkRoom(for: estimated)
        snapshot.record.sequence = nextSequence
        snapshot.record.group = group
        nextSequence += 1
        let lane = Lane(account: snapshot.record.account, group: group)
        reservedCount += 1
        reservedBytes += estimated
        writing[lane, default: []].insert(snapshot.record.sequence)
        writesInProgress += 1
        defer {
            reservedCount -= 1
            reservedBytes -= estimated
            writing[lane]?.remove(snapshot.record.sequence)
            if writing[lane]?.isEmpty == true { writing[lane] = nil }
            writesInProgress -= 1
            if writesInProgress == 0 {
                for waiter in writesDone { waiter.resume() }
                writesDone.removeAll()
            }
            wake()
        }
        let prepared: PreparedMutation
        do {
            prepared = try await snapshot.prepare(in: store)   // the body copied, the record encoded: its size known
        } catch {
            throw Self.enqueueError(error)
        }
        // Larger than estimated and no room: refused before the record is written (never one on disk that
        // the next launch would deliver although the caller was told it was refused).
        let held = storedBytes + reservedBytes - estimated
        guard count - 1 < configuration.maximumCount, held + prepared.size <= configuration.maximumBytes else {
            do {
                try await BlockingFileWork.run { [store] _ in try prepared.removeBody(in: store) }
            } catch {
                throw OutboxError.storageFailed("the outbox is full, and the copy of the body was not removed: \(Self.enqueueError(error))")
            }
            throw OutboxError.full(count: count - 1, bytes: held)
        }
        reservedBytes += prepared.size - estimated
        estimated = prepared.size
        do {
            try await BlockingFileWork.run { [store] _ in
                do {
                    try prepared.write(in: store)
                } catch {
                    if let body = prepared.bodyPath { PreparedMutation.removeBodyLeavingNoRecord(body, in: store) }
                    throw error
                }
            }
        } catch {
            throw Self.enqueueError(error)
        }
        var record = prepared.record
        let isWhole = OutboxStore.keepsInline(&record, budget: &inlineBudget)
        entries[record.id] = Entry(record: record, size: prepared.size, isWhole: isWhole)
        storedBytes += prepared.size
        insert(record, in: lane)
        return record.mutation(size: prepared.size)
    }

    /// The mutations held, being written, and delivered but not yet acknowledged on disk (their files are
    /// removed before they are reported: see ``acknowledge(_:response:)``).
    private var count: Int { entries.count + reservedCount + removingCount }

    private func checkRoom(for bytes: Int64) throws {
        let held = storedBytes + reservedBytes
        guard count < configuration.maximumCount, held + bytes <= configuration.maximumBytes else {
            throw OutboxError.full(count: count, bytes: held)
        }
    }

    private func insert(_ record: OutboxRecord, in lane: Lane) {
        let entries = self.entries
        lanes[lane, default: LaneQueue()].insert(record.id) { entries[$0].map { $0.record.sequence < record.sequence } ?? false }
    }

    static func enqueueError(_ error: any Error) -> any Error {
        switch error {
        case let error as OutboxError: return error
        case let error as DurabilityError: return OutboxError.storageFailed(error.description)
        case is CancellationError, NetworkError.cancelled: return NetworkError.cancelled
        default: return OutboxError.invalidMutation(Redactor().error(error))
        }
    }

    /// Stops delivering: the mutation in flight is cancelled (it stays pending and is sent again, with its
    /// key, by the next outbox on the folder), the enqueues writing finish, the folder is released and
    /// ``outcomes`` ends. Idempotent; the outbox refuses work afterwards (``OutboxError/closed``).
    public func close() async {
        guard !isClosed else { return }
        isClosed = true
        accountTask?.cancel()
        for task in backoffTasks.values { task.cancel() }
        backoffTasks.removeAll()
        if let deliveryTask {
            deliveryTask.cancel()
            await deliveryTask.value
        }
        let sends = Array(senders.values)
        for task in sends { task.cancel() }
        for task in sends { await task.value }
        if writesInProgress > 0 { await withCheckedContinuation { writesDone.append($0) } }
        await drainAcknowledged()   // the delivered mutations' files removed, their outcomes reported
        lock.release()
        broadcaster.finish()
    }
}
