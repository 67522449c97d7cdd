import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How an ``AuthInterceptor`` recognises the requests of its own token refresh, without a task-local
/// that other work could inherit:
///
/// - calls sent through the `network` its refresh closure receives carry the interceptor's identity in
///   their ``RequestContext``, whichever task sends them;
/// - calls sent from the very task that runs the refresh closure (say, through a provider the app
///   keeps elsewhere) are recognised by that task's identity, only while the refresh runs. A task
///   spawned inside the closure is a different task: it is authenticated normally.
final class RunningRefreshes: @unchecked Sendable {
    // @unchecked: `tasks` is guarded by `lock`.
    private let lock = NSLock()
    private var tasks: [Int] = []

    /// Runs `refresh` in the current task, marked as a refresh task while it runs, and returns its
    /// result with the status of the last unacceptable HTTP response a provider saw while it ran.
    func run(_ refresh: () async throws -> Credential) async -> (result: Result<Credential, any Error>, status: Int?) {
        let task = Self.currentTask()
        insert(task)
        defer { remove(task) }
        let recorder = StatusRecorder()
        let result: Result<Credential, any Error>
        do {
            result = .success(try await RefreshObservation.$current.withValue(recorder) { try await refresh() })
        } catch {
            result = .failure(error)
        }
        return (result, recorder.status)
    }

    private func insert(_ task: Int) {
        lock.lock(); defer { lock.unlock() }
        tasks.append(task)
    }

    private func remove(_ task: Int) {
        lock.lock(); defer { lock.unlock() }
        if let index = tasks.firstIndex(of: task) { tasks.remove(at: index) }
    }

    /// Whether the current task is running a refresh of this interceptor.
    func containsCurrentTask() -> Bool {
        lock.lock(); defer { lock.unlock() }
        guard !tasks.isEmpty else { return false }
        return tasks.contains(Self.currentTask())
    }

    /// An identity of the current task, unique among the tasks alive at the same time.
    private static func currentTask() -> Int {
        withUnsafeCurrentTask { $0?.hashValue } ?? 0
    }
}

/// Lets the provider report, to a running refresh, the status of a response it did not accept, so
/// that a rejected refresh token is recognised even when an error mapper turned it into an app error.
/// Observation only: it changes nothing about how any request is sent.
enum RefreshObservation {
    @TaskLocal static var current: StatusRecorder?
}

/// The status of the last unacceptable response seen during one refresh.
final class StatusRecorder: @unchecked Sendable {
    // @unchecked: `last` is guarded by `lock`.
    private let lock = NSLock()
    private var last: Int?

    func record(status: Int) {
        lock.lock(); defer { lock.unlock() }
        last = status
    }

    var status: Int? {
        lock.lock(); defer { lock.unlock() }
        return last
    }
}

/// The `network` an ``AuthInterceptor``'s refresh closure receives: the provider of the call that
/// needed the refresh, with each call marked as that interceptor's refresh (no token, no refresh).
struct RefreshSender: NetworkProviding {
    let provider: NetworkProvider?
    let interceptorID: UUID

    func request<T: Decodable>(_ endpoint: some Endpoint, as type: T.Type, interceptor: (any RequestInterceptor)?) async throws -> T {
        let provider = try resolvedProvider()
        return try provider.decode(try await provider.response(endpoint, interceptor: interceptor, refreshing: interceptorID), as: type)
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
