import Foundation

/// The background revalidations a provider runs for entries that answered stale
/// (`Cache-Control: stale-while-revalidate`, RFC 5861 §3): at most one per cache key at a time, however many
/// callers the entry answered meanwhile.
final class BackgroundRevalidations: @unchecked Sendable {
    // @unchecked: `running` and `idleWaiters` are guarded by `lock`.
    private let lock = NSLock()
    private var running: Set<CacheKey> = []
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []

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
        let waiters = running.isEmpty ? idleWaiters : []
        if running.isEmpty { idleWaiters = [] }
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no revalidation is running.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            guard !running.isEmpty else {
                lock.unlock()
                continuation.resume()
                return
            }
            idleWaiters.append(continuation)
            lock.unlock()
        }
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
    /// out meanwhile). It runs in a detached task the provider owns: the caller's cancellation and deadline
    /// do not reach it, and no caller waits for it. Its monitor events carry a context whose
    /// ``RequestContext/isBackgroundRevalidation`` is `true`. When it fails, the entry stays as it was; the
    /// next call it answers stale starts another.
    func revalidateInBackground(_ endpoint: some Endpoint, interceptor: (any RequestInterceptor)?, key: CacheKey, sizeLimit: Int?) {
        guard backgroundRevalidations.begin(key) else { return }
        Task.detached { [self] in
            var mode = TransferMode()
            mode.cachePolicy = .revalidate   // ask the server, conditionally when the entry has a validator
            mode.sizeLimit = sizeLimit
            do {
                _ = try await perform(endpoint, interceptor: interceptor, refreshing: nil, mode: mode, inBackground: true)
            } catch {
                // Told to the monitors (requestDidFinish); the entry stays, for the next stale answer to retry.
            }
            backgroundRevalidations.end(key)
        }
    }

    /// Returns once no background revalidation is running (see ``CacheResult/staleWhileRevalidate``) and
    /// the monitors have been told of every event queued before: a test's way to wait for the entry's update
    /// without polling.
    ///
    /// ```swift
    /// let stale = try await provider.response(UserAPI.user(id: 1))   // report.cache == .staleWhileRevalidate
    /// await provider.waitForBackgroundRevalidations()
    /// let fresh = try await provider.response(UserAPI.user(id: 1))   // report.cache == .hit
    /// ```
    public func waitForBackgroundRevalidations() async {
        await backgroundRevalidations.waitUntilIdle()
        await events.drain()
    }
}
