import Foundation

/// A ``ResponseCache`` in memory: up to ``maximumBytes`` of entries (by ``CachedResponse/cost``), the
/// least recently used evicted first. Reading an entry counts as a use.
///
/// Every operation takes O(1) time (a hash lookup and a few index writes), however many entries the
/// cache holds; a hit copies no body (`Data` is shared until someone writes to it). The entries go with
/// the process: pair it with a ``DiskResponseCache`` for ones that survive relaunches.
///
/// ```swift
/// let cache = MemoryResponseCache(maximumBytes: 20 * 1_024 * 1_024)
/// let provider = NetworkProvider(cache: cache)
/// // on sign-out: the account's entries go, the public ones stay
/// await cache.removeAll(inPartition: CacheKey.partition(forAccount: account))
/// ```
public final class MemoryResponseCache: ResponseCache, @unchecked Sendable {
    // @unchecked: `entries` is only read and written with `lock` held.
    private let lock = NSLock()
    private var entries = RecentlyUsedList<CacheKey, CachedResponse>()

    /// The most the entries may cost together, in bytes (see ``CachedResponse/cost``).
    public let maximumBytes: Int

    /// Creates an empty cache that keeps up to `maximumBytes` of entries.
    ///
    /// - Parameter maximumBytes: the bound, by ``CachedResponse/cost`` (about the bytes of body, headers
    ///   and URL). The default, 10 MiB, holds a few thousand typical JSON responses; an entry larger
    ///   than the bound is never stored, and `0` stores nothing.
    public init(maximumBytes: Int = 10 * 1_024 * 1_024) {
        self.maximumBytes = maximumBytes
    }

    /// The sum of the stored entries' ``CachedResponse/cost``: never more than ``maximumBytes``.
    public var totalCost: Int { locked { entries.totalCost } }

    /// How many entries the cache holds.
    public var count: Int { locked { entries.count } }

    /// The entry stored under `key`, or `nil`; the entry becomes the most recently used.
    public func cachedResponse(for key: CacheKey) -> CachedResponse? {
        lock.lock()
        defer { lock.unlock() }
        return entries.use(key)
    }

    /// Stores `response` under `key` as the most recently used entry, then evicts the least recently used
    /// ones until the entries cost at most ``maximumBytes``. A response costing more than ``maximumBytes``
    /// is not stored, and the entry it would have replaced is removed.
    public func store(_ response: CachedResponse, for key: CacheKey) {
        let cost = response.cost
        var evicted: [CachedResponse] = []
        lock.lock()
        if cost > maximumBytes {
            evicted.append(contentsOf: entries.remove(key).map { [$0] } ?? [])
        } else {
            entries.set(response, cost: cost, for: key)
            while entries.totalCost > maximumBytes, let oldest = entries.removeOldest() {
                evicted.append(oldest.value)
            }
        }
        lock.unlock()
        withExtendedLifetime(evicted) {}   // the evicted bodies are freed after the lock is released
    }

    /// Removes the entry stored under `key`, if any.
    public func removeResponse(for key: CacheKey) {
        locked { entries.remove(key) }
    }

    /// Removes exactly the entries whose ``CacheKey/partition`` is `partition` (`nil`: the entries of calls
    /// that needed no authentication). O(n) in the number of entries.
    public func removeAll(inPartition partition: String?) {
        locked { entries.removeAll { $0.partition == partition } }
    }

    /// Removes every entry.
    public func removeAll() {
        var removed = RecentlyUsedList<CacheKey, CachedResponse>()
        locked { swap(&removed, &entries) }
        withExtendedLifetime(removed) {}   // the bodies are freed after the lock is released
    }

    @discardableResult
    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }
}
