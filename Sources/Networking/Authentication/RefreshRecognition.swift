import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One running token refresh of an ``AuthInterceptor``, and how its requests are recognised:
///
/// - calls sent through the `network` the refresh closure receives carry the interceptor's identity in
///   their ``RequestContext``, whichever task sends them;
/// - calls sent from the refresh's task, or from a task started inside the refresh closure, see this
///   run as their task-local ``current``, but only *while the refresh runs*: such a call gets no token
///   and never waits for or triggers a refresh (so a child task the closure awaits cannot deadlock it).
///   Once the refresh has ended, the mark means nothing: a task spawned during the refresh that sends
///   afterwards is authenticated normally.
///
/// The run also keeps the status of the last HTTP response a provider did not accept for one of the
/// refresh's own calls (or `nil` when that call failed without one, or succeeded), so that a rejected
/// refresh token is recognised from the HTTP status whatever the app's error mapper made of it. The
/// refresh's own calls are those sent through `network`, and those sent from the refresh's task itself;
/// not those of tasks started inside the closure, which may be about anything.
final class RefreshRun: @unchecked Sendable {
    // @unchecked: `running` and `lastStatus` are guarded by `lock`.

    /// The run whose scope the current task is in, if any.
    @TaskLocal static var current: RefreshRun?

    /// The identity of the interceptor refreshing.
    let interceptorID: UUID
    private let lock = NSLock()
    private var running = true
    private var lastStatus: Int?
    /// The refresh's own task, by identity (a hash of the task's address: unique among live tasks).
    private var task: Int?

    init(interceptorID: UUID) {
        self.interceptorID = interceptorID
    }

    /// Runs `refresh` in this run's scope and returns its result with the status of the last
    /// unacceptable response of the last call made in the scope.
    func run(_ refresh: () async throws -> Credential) async -> (result: Result<Credential, any Error>, status: Int?) {
        setTask(withUnsafeCurrentTask { $0?.hashValue })
        let result: Result<Credential, any Error>
        do {
            result = .success(try await Self.$current.withValue(self) { try await refresh() })
        } catch {
            result = .failure(error)
        }
        return (result, end())
    }

    /// Whether the refresh is still running.
    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return running
    }

    /// Whether the current task is the refresh's own task and the refresh still runs: a call it sends is
    /// the refresh's request (see ``NetworkProvider/takeSlot(for:context:deadline:)``). Not a task
    /// started inside the refresh closure: those may send anything.
    var isCurrentTaskRefreshing: Bool {
        let current = withUnsafeCurrentTask { $0?.hashValue }
        lock.lock()
        defer { lock.unlock() }
        return running && current != nil && current == task
    }

    /// Notes how a call made in the scope ended, if it is one of the refresh's own (see above): `status`
    /// is that of the response the provider did not accept, or `nil` for a success or a failure without
    /// a response.
    func record(status: Int?, of context: RequestContext) {
        let own = context.refreshing == interceptorID || withUnsafeCurrentTask { $0?.hashValue } == taskIdentity
        guard own else { return }
        lock.lock()
        defer { lock.unlock() }
        if running { lastStatus = status }
    }

    private var taskIdentity: Int? {
        lock.lock()
        defer { lock.unlock() }
        return task
    }

    private func setTask(_ identity: Int?) {
        lock.lock()
        defer { lock.unlock() }
        task = identity
    }

    /// Ends the run; returns the last recorded status.
    private func end() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        running = false
        return lastStatus
    }
}

/// The `network` an ``AuthInterceptor``'s refresh closure receives: the provider of the call that
/// needed the refresh, with each call marked as that interceptor's refresh (no token, no refresh).
struct RefreshSender: NetworkProviding {
    let provider: NetworkProvider?
    let interceptorID: UUID

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        let provider = try resolvedProvider()
        return try provider.decodePayload(
            try await provider.response(endpoint, interceptor: interceptor, refreshing: interceptorID), as: type, for: endpoint)
    }

    func request<T: Decodable>(
        _ endpoint: some Endpoint, as type: T.Type, atKeyPath keyPath: String, interceptor: (any RequestInterceptor)?
    ) async throws -> T {
        let provider = try resolvedProvider()
        let response = try await provider.response(endpoint, interceptor: interceptor, refreshing: interceptorID)
        return try provider.decodePayload(response, as: type, for: endpoint, atKeyPath: keyPath)
    }

    func response(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?) async throws -> Response {
        try await resolvedProvider().response(endpoint, interceptor: interceptor, refreshing: interceptorID)
    }

    private func resolvedProvider() throws -> NetworkProvider {
        guard let provider else { throw NoProviderForRefresh() }
        return provider
    }
}

/// A refresh was started for a ``RequestContext`` made without a provider, and its closure used the
/// `network` it was given.
struct NoProviderForRefresh: Error, CustomStringConvertible {
    var description: String { "The refresh has no provider to send through: its RequestContext was made without one." }
}
