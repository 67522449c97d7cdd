import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Uploads from files and downloads to files that go on while the app is suspended or gone, on a
/// background `URLSession` (Apple platforms), reattached at the next launch.
///
/// Make one at launch, with the same identifier every time, subscribe to ``outcomes`` and call
/// ``start()``. Every transfer is recorded on disk before its task is resumed; at the next launch the
/// service matches the tasks the system reports, and the events it delivers for transfers that finished
/// while the app was gone, to those records, and hands each outcome to ``outcomes`` as a value, kept in
/// its record until the app acknowledges it (``acknowledge(_:)-(BackgroundTransferOutcome)``): told again at each launch until then. A
/// record whose task the system no longer knows ends as ``BackgroundTransferError/lost``; a record that
/// cannot be read as ``BackgroundTransferOutcome/unreadableRecord(_:)``: nothing is dropped silently.
///
/// ```swift
/// let transfers = try BackgroundTransferService(identifier: "com.example.app.transfers", folder: folder, authenticator: auth)
/// Task {
///     for await outcome in transfers.outcomes {
///         await library.apply(outcome)
///         await transfers.acknowledge(outcome)
///     }
/// }
/// try await transfers.start()
/// let record = try await transfers.upload(VideoAPI.upload(videoURL), tag: video.id)
/// ```
///
/// See <doc:BackgroundTransfers> for the app delegate's part and the limits the system sets.
public actor BackgroundTransferService {
    /// The most bytes of an upload's response body kept for its ``BackgroundTransferResponse/body``.
    public static let maximumUploadResponseSize = 1 << 20

    /// The session's identifier.
    public nonisolated let identifier: String
    /// Every transfer's outcome, and every record that could not be read. Iterate it from one task, from
    /// launch on: outcomes wait here until then. An outcome not acknowledged (``acknowledge(_:)-(BackgroundTransferOutcome)``) before
    /// the process ends is handed out again at the next launch.
    public nonisolated let outcomes: AsyncStream<BackgroundTransferOutcome>

    let session: any BackgroundTransferSession
    let store: any BackgroundTransferRecordStore
    let inlet: BackgroundEventInlet
    let authenticator: AuthInterceptor?
    /// The app's home directory (its container) at this launch: an app update moves it.
    let homeDirectory: String
    /// Where the service writes upload bodies (spooled forms, in-memory bodies).
    let bodies: URL
    let outcomeContinuation: AsyncStream<BackgroundTransferOutcome>.Continuation
    var records: [UUID: BackgroundTransferRecord] = [:]
    var responseBodies: [UUID: Data] = [:]
    var stagedFiles: [UUID: URL] = [:]
    var progressContinuations: [UUID: [AsyncStream<TransferProgress>.Continuation]] = [:]
    var latestProgress: [UUID: TransferProgress] = [:]
    var cancelledByApp: Set<UUID> = []
    /// Transfers whose outcome was handed out and is kept on disk until the app acknowledges it.
    var unacknowledged: [UUID: BackgroundTransferRecord] = [:]
    /// Records reported lost at this launch: a completion the system delivers later still counts.
    var reportedLost: [UUID: BackgroundTransferRecord] = [:]
    /// Records the system listed no task for, reported lost when the session's events finish (a
    /// completion handler was given: the system is about to deliver events that may be theirs).
    var suspectedLost: Set<UUID> = []
    private var pump: Task<Void, Never>?
    private var stopped = false
    /// Whether ``start()`` ran and ``stop()`` did not: events are handled.
    var isRunning: Bool { pump != nil && !stopped }
    /// The service's hold on its folder: one service a folder, across processes.
    private let folderLock: DurableFolderLock

    /// Creates a service that runs its transfers on `session`, keeping its records and files in `folder`.
    ///
    /// - Parameters:
    ///   - session: the system's session: the Apple one made by
    ///     `init(identifier:folder:authenticator:configure:)`, or a simulated one in tests.
    ///   - folder: a folder only this service uses, that outlives the app's launches (in Application Support).
    ///   - authenticator: attaches the token to each transfer when it is created.
    /// - Throws: ``NetworkError/fileWriteFailed(_:)`` when the folder cannot be created, or when another
    ///   service (in this process or another) holds it: ``stop()`` releases it.
    public init(session: any BackgroundTransferSession, folder: URL, authenticator: AuthInterceptor? = nil) throws {
        try self.init(
            session: session, store: BackgroundTransferFileStore(folder: folder.appendingPathComponent("records")), folder: folder,
            authenticator: authenticator)
    }

    init(
        session: any BackgroundTransferSession, store: any BackgroundTransferRecordStore, folder: URL, authenticator: AuthInterceptor?,
        homeDirectory: String = NSHomeDirectory()
    ) throws {
        self.identifier = session.identifier
        self.homeDirectory = homeDirectory
        self.session = session
        self.store = store
        self.authenticator = authenticator
        do {
            self.folderLock = try DurableFolderLock(folder: folder.path)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        self.bodies = folder.appendingPathComponent("bodies")
        let staging = folder.appendingPathComponent("staging")
        do {
            try FileManager.default.createDirectory(at: bodies, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        } catch {
            throw NetworkError.fileWriteFailed(error)
        }
        self.inlet = BackgroundEventInlet(staging: staging)
        (outcomes, outcomeContinuation) = AsyncStream.makeStream(of: BackgroundTransferOutcome.self)
    }

    deinit {
        pump?.cancel()
        inlet.finish()
        outcomeContinuation.finish()
        folderLock.release()
    }

    /// Stops handing out outcomes and progress, and releases the folder for another service: what the
    /// end of the process does. The system's tasks go on; a later service reattaches them.
    public func stop() {
        stopped = true
        session.detach()
        pump?.cancel()
        inlet.finish()
        outcomeContinuation.finish()
        for continuation in progressContinuations.values.joined() { continuation.finish() }
        progressContinuations = [:]
        folderLock.release()
    }

    /// Reads the records, reattaches the system's tasks, and starts handing outcomes to ``outcomes``:
    /// first again those handed out at an earlier launch and never acknowledged (``acknowledge(_:)-(BackgroundTransferOutcome)``),
    /// then those of transfers that finished while the app was gone, then
    /// ``BackgroundTransferError/lost`` for each record whose task the system no longer knows. Call it
    /// once, at launch.
    ///
    /// - Throws: ``NetworkError/fileWriteFailed(_:)`` when the records' folder cannot be read.
    public func start() async throws {
        guard pump == nil, !stopped else { return }
        let (loaded, issues) = try store.loadAll()
        for issue in issues { outcomeContinuation.yield(.unreadableRecord(issue)) }
        for stored in loaded {
            let record = stored.record.rebased(home: homeDirectory, bodies: bodies)   // an app update moves the container
            if let settlement = stored.settlement {   // told before, not acknowledged: told again
                unacknowledged[record.id] = record
                outcomeContinuation.yield(settlement.outcome(of: record))
                continue
            }
            records[record.id] = record
            var request = URLRequest(url: record.url)
            request.httpMethod = record.method
            inlet.track(record.label, request: request, authorizationHeader: authenticator?.header.name)
        }
        let items = inlet.items
        pump = Task { [weak self] in
            for await item in items {
                guard let self else { return }
                await self.handle(item)
            }
        }
        session.attach(inlet)
        let known = await session.taskLabels()
        inlet.enqueue(.reconcile(known: known, recordIDs: Set(loaded.filter { $0.settlement == nil }.map(\.record.id))))
    }

    /// Hands the service the app delegate's completion handler for its session, to call once the
    /// session's events are handled (after `urlSessionDidFinishEvents`), exactly once. Returns `false`,
    /// leaving `completionHandler` to the caller, when `identifier` is another session's.
    ///
    /// Call it from `application(_:handleEventsForBackgroundURLSession:completionHandler:)`. On Apple
    /// platforms the handler is called on the main queue.
    @discardableResult
    public nonisolated func handleEventsForBackgroundURLSession(identifier: String, completionHandler: @escaping () -> Void) -> Bool {
        guard identifier == self.identifier else { return false }
        let handler = BackgroundEventInlet.CompletionHandler(completionHandler)
        #if canImport(Darwin)
            inlet.holdCompletionHandler { DispatchQueue.main.async { handler.call() } }   // UIKit wants it on the main thread
        #else
            inlet.holdCompletionHandler { handler.call() }
        #endif
        return true
    }

    /// Tells the service the app has applied the outcome of the transfer `id`: its record is removed
    /// from disk. Until then the outcome is kept there, and handed out again at the next launch when the
    /// process ends first (an outcome may be told twice, never not at all). Nothing happens for a
    /// transfer that has not ended, or after ``stop()``.
    public func acknowledge(_ id: UUID) {
        guard isRunning, unacknowledged.removeValue(forKey: id) != nil else { return }
        try? store.remove(id)   // a record that could not be removed is told again at the next launch: harmless
    }

    /// Tells the service the app has applied `outcome`: ``acknowledge(_:)-(BackgroundTransferOutcome)`` with its record's id
    /// (nothing for ``BackgroundTransferOutcome/unreadableRecord(_:)``, which is reported once).
    public func acknowledge(_ outcome: BackgroundTransferOutcome) {
        if let id = outcome.record?.id { acknowledge(id) }
    }

    /// The transfers started and not yet ended, oldest first.
    public var pendingTransfers: [BackgroundTransferRecord] {
        records.values.sorted { $0.createdAt < $1.createdAt }
    }

    /// The progress of the transfer `id` while the app runs (a reattached transfer's too), from the
    /// latest figure known; finished when the transfer ends, at once when it is not pending.
    public func progress(of id: UUID) -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        guard records[id] != nil else {
            continuation.finish()
            return stream
        }
        if let latest = latestProgress[id] { continuation.yield(latest) }
        progressContinuations[id, default: []].append(continuation)
        return stream
    }

    /// Cancels the transfer `id`; its outcome is ``BackgroundTransferError/cancelled``.
    public func cancel(_ id: UUID) {
        guard let record = records[id] else { return }
        cancelledByApp.insert(id)
        session.cancelTask(labelled: record.label)
    }
}
