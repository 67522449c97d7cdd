import Foundation

/// The background revalidations a provider runs for entries that answered stale
/// (`Cache-Control: stale-while-revalidate`, RFC 5861 §3): at most one per cache key at a time, however many
/// callers the entry answered meanwhile.
final class BackgroundRevalidations: @unchecked Sendable {
    // @unchecked: `running`, `idleWaiters` and `startGate` are guarded by `lock`.
    private let lock = NSLock()
    private var running: Set<CacheKey> = []
    private var idleWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    /// Tests only: awaited by each background revalidation before it starts (to change the account meanwhile).
    private var startGate: (@Sendable () async -> Void)?

    /// Marks `key` as being revalidated: `false` when it already is (the caller starts nothing).
    func begin(_ key: CacheKey) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return running.insert(key).inserted
    }

    /// The revalidation of `key` ended: the next stale answer may start another.
    func end(_ key: CacheKey) {
        lock.lock()
        running.remove(key)
        let waiters = running.isEmpty ? Array(idleWaiters.values) : []
        if running.isEmpty { idleWaiters = [:] }
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no revalidation is running (those started meanwhile included), or at once when the
    /// waiting task is cancelled.
    func waitUntilIdle() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                // Cancelled before this registration: the handler below found nothing to resume.
                guard !running.isEmpty, !Task.isCancelled else {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                idleWaiters[id] = continuation
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let waiter = idleWaiters.removeValue(forKey: id)
            lock.unlock()
            waiter?.resume()
        }
    }

    /// Tests only: each background revalidation awaits `gate` before it starts.
    func holdStarts(until gate: @escaping @Sendable () async -> Void) {
        lock.lock()
        startGate = gate
        lock.unlock()
    }

    /// Awaits the gate of ``holdStarts(until:)``, if any.
    func waitForStart() async {
        let gate = lock.withLock { startGate }
        await gate?()
    }
}

extension NetworkProvider {
    /// Revalidates the entry under `key`, which just answered a call to `endpoint` stale, in the background
    /// (RFC 5861 §3: "the cache SHOULD attempt to revalidate it while still serving stale responses"),
    /// unless a revalidation of that entry is already running.
    ///
    /// The revalidation is a call of its own through the whole pipeline — the provider's interceptor and
    /// `interceptor`, the token, retries, redirects, the endpoint's deadline, the entry's validators as
    /// conditions — whose answer updates the cache as any call's does (so not for an account that signed
    /// out meanwhile). It runs in a detached task of `.utility` priority the provider owns: the caller's
    /// cancellation and deadline do not reach it, and no caller waits for it. Its monitor events carry a
    /// context whose ``RequestContext/isBackgroundRevalidation`` is `true`. It is about `key` only: when it
    /// starts, a call whose key differs (another account signed in, or none is), whose entry is gone (signed
    /// out, removed), ends with ``NetworkError/cancelled`` having sent nothing; one whose entry is fresh again
    /// (a foreground load stored a new one) ends as a ``CacheResult/hit``, having sent nothing. When it
    /// fails, the entry stays as it was; the next call it answers stale starts another.
    func revalidateInBackground(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, key: CacheKey, sizeLimit: Int?) {
        guard backgroundRevalidations.begin(key) else { return }
        Task.detached(priority: .utility) { [self] in
            await backgroundRevalidations.waitForStart()
            var mode = TransferMode()
            mode.cachePolicy = .revalidate   // ask the server, conditionally when the entry has a validator
            mode.sizeLimit = sizeLimit
            do {
                _ = try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode, revalidating: key)
            } catch {
                // Told to the monitors (requestDidFinish); the entry stays, for the next stale answer to retry.
            }
            backgroundRevalidations.end(key)
        }
    }

    /// Returns once no background revalidation of this provider runs (see
    /// ``CacheResult/staleWhileRevalidate``) and the monitors have been told of every event queued before: a
    /// test's way to wait for the entry's update without polling.
    ///
    /// It waits for the revalidations running when it is called and for those that start while it waits,
    /// until none runs at all (an app that keeps answering stale calls meanwhile may keep it waiting). Each
    /// revalidation ends by its endpoint's deadline (or the provider's), as any call. A cancelled waiter
    /// returns at once, the revalidations still running.
    ///
    /// ```swift
    /// let stale = try await provider.response(UserAPI.user(id: 1))   // report.cache == .staleWhileRevalidate
    /// await provider.waitForBackgroundRevalidations()
    /// let fresh = try await provider.response(UserAPI.user(id: 1))   // report.cache == .hit
    /// ```
    public func waitForBackgroundRevalidations() async {
        await backgroundRevalidations.waitUntilIdle()
        if Task.isCancelled { return }
        await events.drain()
    }
}

extension RequestContext {
    /// For a background revalidation (RFC 5861 §3), which is about the entry under one key only: throws
    /// ``NetworkError/cancelled`` — nothing sent — when the call's cache key (`nil`: none, or no entry to
    /// revalidate) is not that one. Does nothing for any other call.
    func checkRevalidatedKey(_ key: CacheKey?) throws {
        guard let revalidatedKey, key != revalidatedKey else { return }
        throw NetworkError.cancelled
    }
}
