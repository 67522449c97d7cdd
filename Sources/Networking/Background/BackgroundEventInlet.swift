import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a ``BackgroundTransferService`` hands its session as the ``BackgroundSessionReceiver``: it takes
/// the session's events on the session's own thread, does there what cannot wait (moves a downloaded
/// file out of the system's reach, decides a redirect), and queues the rest, in order, for the service.
/// It also holds the app delegate's completion handler until the events are handled.
final class BackgroundEventInlet: BackgroundSessionReceiver, @unchecked Sendable {
    // @unchecked: `chains`, `failures`, `completionHandler` and `eventsFinished` are guarded by `lock`.

    /// One item for the service, in the order the session delivered it.
    enum Item: Sendable {
        /// An event (a download's file already moved to the staging folder).
        case event(BackgroundSessionEvent)
        /// The system's task labels at launch, to compare with `recordIDs`, the records read at launch.
        case reconcile(known: Set<String>, recordIDs: Set<UUID>)
    }

    /// Where downloaded files wait until their task's completion is handled.
    let staging: URL
    let items: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation
    private let lock = NSLock()
    private var chains: [String: RedirectChain] = [:]
    private var failures: [String: NetworkError] = [:]
    private var completionHandler: (@Sendable () -> Void)?
    private var eventsFinished = false

    init(staging: URL) {
        self.staging = staging
        (items, continuation) = AsyncStream.makeStream(of: Item.self)
    }

    deinit {
        continuation.finish()
    }

    /// Queues `item` behind the events already delivered.
    func enqueue(_ item: Item) {
        continuation.yield(item)
    }

    /// Stops the queue: the service is gone.
    func finish() {
        continuation.finish()
    }

    // MARK: Redirects and failures

    /// Starts deciding the redirects of the task labelled `label`, sent as `request`; `hasBody` for an upload.
    func track(_ label: String, request: URLRequest, authorizationHeader: String?) {
        let chain = RedirectChain(attempt: request, adaptedHeaders: authorizationHeader.map { [$0] } ?? [])
        lock.lock()
        chains[label] = chain
        lock.unlock()
    }

    /// Stops tracking `label`, and returns the failure noted for it, if any.
    func untrack(_ label: String) -> NetworkError? {
        lock.lock()
        defer { lock.unlock() }
        chains[label] = nil
        return failures.removeValue(forKey: label)
    }

    /// Notes that the task labelled `label` failed for `error`, whatever its completion says.
    func noteFailure(_ error: NetworkError, for label: String) {
        lock.lock()
        if failures[label] == nil { failures[label] = error }
        lock.unlock()
    }

    func redirect(label: String, response: BackgroundSessionResponse, proposed: URLRequest, current: URLRequest) -> URLRequest? {
        lock.lock()
        defer { lock.unlock() }
        guard var chain = chains[label] else { return nil }   // a task this launch knows nothing of: stop there
        let hasBody = current.httpMethod.map { $0 != "GET" && $0 != "HEAD" } ?? false
        let decision = RedirectPolicy.decision(
            statusCode: response.statusCode, location: response.header("Location"), current: current, chain: chain, hasBody: hasBody,
            allowsInsecure: false)
        switch decision {
        case .answer:
            return nil
        case .fail(let error):
            if failures[label] == nil { failures[label] = error }
            return nil
        case .follow(let next, _):
            chain.didFollow(to: next)
            chains[label] = chain
            return next
        }
    }

    // MARK: Events

    func receive(_ event: BackgroundSessionEvent) {
        guard case .finishedDownloading(let label, let file) = event else {
            continuation.yield(.event(event))
            return
        }
        // The system removes `file` when this returns: move it now, on the session's thread.
        let staged = staging.appendingPathComponent(label + ".download")
        do {
            try? FileManager.default.removeItem(at: staged)   // a leftover of an earlier launch, if any
            try FileManager.default.moveItem(at: file, to: staged)
            continuation.yield(.event(.finishedDownloading(label: label, file: staged)))
        } catch {
            noteFailure(.fileWriteFailed(error), for: label)
        }
    }

    // MARK: The app delegate's completion handler

    /// The completion handler UIKit gives the app delegate: not `Sendable` in its signature, called once,
    /// on the main queue on Apple platforms.
    struct CompletionHandler: @unchecked Sendable {
        // @unchecked: the closure is called once, by `eventsDidFinish` or `holdCompletionHandler`, never concurrently.
        let call: () -> Void

        init(_ call: @escaping () -> Void) {
            self.call = call
        }
    }

    /// Whether the app delegate's completion handler was given and waits for the session's events.
    var hasCompletionHandler: Bool {
        lock.lock()
        defer { lock.unlock() }
        return completionHandler != nil
    }

    /// Keeps `handler` until the session's events are handled, or calls it at once if they already were.
    func holdCompletionHandler(_ handler: @escaping @Sendable () -> Void) {
        lock.lock()
        if eventsFinished {
            eventsFinished = false
            lock.unlock()
            handler()
            return
        }
        let previous = completionHandler
        completionHandler = handler
        lock.unlock()
        previous?()   // a second one before the events finished: the first is released, never dropped
    }

    /// The session's events were handled: calls the held completion handler once, or keeps the news for
    /// the one to come.
    func eventsDidFinish() {
        lock.lock()
        let handler = completionHandler
        completionHandler = nil
        eventsFinished = handler == nil
        lock.unlock()
        handler?()
    }
}
