import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which account's entries a call may read and write: an interceptor that authenticates calls says
/// (``AuthInterceptor`` does, from ``Credential/account``).
enum CachePartition: Equatable {
    /// The interceptor does not authenticate this request.
    case notAuthenticated
    /// The request is sent for this account: its entries are filed under this partition.
    case account(String)
    /// The request is authenticated but for no known account (signed out, or no ``Credential/account``):
    /// the call neither reads nor stores entries.
    case unknownAccount
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
    /// The first answer other than ``CachePartition/notAuthenticated`` among the adapters.
    func cachePartition(for request: URLRequest, context: RequestContext) async -> CachePartition {
        for adapter in adapters {
            guard let partitioning = adapter as? any CachePartitioning else { continue }
            let partition = await partitioning.cachePartition(for: request, context: context)
            if partition != .notAuthenticated { return partition }
        }
        return .notAuthenticated
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
        return .account(CacheKey.partition(forAccount: account))
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
