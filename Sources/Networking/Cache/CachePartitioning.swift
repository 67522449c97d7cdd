import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which account's entries a call may read and write: an interceptor that authenticates calls says
/// (``AuthInterceptor`` does, from ``Credential/account``).
enum CachePartition: Equatable {
    /// The interceptor does not authenticate this request.
    case notAuthenticated
    /// The request is sent for this account: its entries are filed under the stamp's partition, while the
    /// stamp is current.
    case account(AccountStamp)
    /// The request is authenticated but for no known account (signed out, no ``Credential/account``, or
    /// two interceptors that both authenticate it): the call neither reads nor stores entries.
    case unknownAccount
}

/// Counts an ``AuthInterceptor``'s changes of account (sign-in, sign-out, an expired session): bumped in
/// the same step that schedules the clearing of the old account's entries, so a store that checks its
/// stamp after writing knows whether a clearing may have missed it.
final class AccountEpoch: @unchecked Sendable {
    // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value = 0

    var current: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func bump() {
        lock.lock()
        value += 1
        lock.unlock()
    }
}

/// An account's partition as it was when a call began, and whether that account is still the one.
struct AccountStamp: Equatable {
    let partition: String
    let epoch: AccountEpoch
    let value: Int

    /// Whether the account has not changed since the stamp was taken.
    var isCurrent: Bool { epoch.current == value }

    static func == (lhs: AccountStamp, rhs: AccountStamp) -> Bool {
        lhs.partition == rhs.partition && lhs.epoch === rhs.epoch && lhs.value == rhs.value
    }
}

/// An interceptor that knows for which account a request is sent, and clears that account's entries
/// from the caches it is attached to when the account's session ends.
protocol CachePartitioning: Sendable {
    /// The partition of `request`, sent as `context`'s call.
    func cachePartition(for request: URLRequest, context: RequestContext) async -> CachePartition
    /// Makes this interceptor clear `cache`'s entries of an account whose session ends.
    func attach(_ cache: any ResponseCache)
}

extension Interceptor: CachePartitioning {
    /// The answer of the one adapter that authenticates the request; ``CachePartition/unknownAccount``
    /// when two do (a provider's `AuthInterceptor` and a call's own: the last one's token is sent, and the
    /// cache cannot tell whose the answer is).
    func cachePartition(for request: URLRequest, context: RequestContext) async -> CachePartition {
        var answer = CachePartition.notAuthenticated
        for adapter in adapters {
            guard let partitioning = adapter as? any CachePartitioning else { continue }
            let partition = await partitioning.cachePartition(for: request, context: context)
            guard partition != .notAuthenticated else { continue }
            if answer != .notAuthenticated { return .unknownAccount }
            answer = partition
        }
        return answer
    }

    func attach(_ cache: any ResponseCache) {
        for adapter in adapters { (adapter as? any CachePartitioning)?.attach(cache) }
    }
}

/// The caches an ``AuthInterceptor`` clears an account from, held weakly (a provider owns its cache).
final class AttachedCaches: @unchecked Sendable {
    // @unchecked: `caches` is guarded by `lock`.
    private struct Weak {
        weak var cache: (any ResponseCache)?
    }

    private let lock = NSLock()
    private var caches: [ObjectIdentifier: Weak] = [:]

    func attach(_ cache: any ResponseCache) {
        lock.lock()
        defer { lock.unlock() }
        caches[ObjectIdentifier(cache)] = Weak(cache: cache)
    }

    /// The caches still alive.
    var all: [any ResponseCache] {
        lock.lock()
        defer { lock.unlock() }
        caches = caches.filter { $0.value.cache != nil }
        return caches.values.compactMap(\.cache)
    }
}

extension AuthInterceptor: CachePartitioning {
    nonisolated func cachePartition(for request: URLRequest, context: RequestContext) async -> CachePartition {
        guard needsToken(request, context) else { return .notAuthenticated }
        return await currentPartition()
    }

    private func currentPartition() async -> CachePartition {
        // A store that cannot be read: the call's adapt throws its error; here it only means "no account".
        guard let account = ((try? await loadedCredential()) ?? nil)?.account, !sessionDidExpire else { return .unknownAccount }
        return .account(AccountStamp(partition: CacheKey.partition(forAccount: account), epoch: accountEpoch, value: accountEpoch.current))
    }

    nonisolated func attach(_ cache: any ResponseCache) {
        caches.attach(cache)
    }

    /// Removes `account`'s entries from every attached cache, after any clearing before it; sign-in,
    /// sign-out and an expired session wait for it.
    func clearCachedResponses(of account: String) {
        let caches = self.caches.all
        guard !caches.isEmpty else { return }
        let partition = CacheKey.partition(forAccount: account)
        let previous = cacheClearing
        cacheClearing = Task {
            await previous?.value
            for cache in caches { await cache.removeAll(inPartition: partition) }
        }
    }
}
