import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Header fields that stay on the wire but that a provider never shows: not to monitors (so not in
/// `NetworkLogger` output or the cURL of what they are given), not to retriers, and not in
/// `Response.request`. Empty in an app: package plumbing for the test kit's routing header, which it
/// registers (``hide(_:)``), as it does for redirects (``RedirectPolicy/keepOnEveryHop(_:)``).
package enum HiddenHeaders {
    nonisolated(unsafe) private static var hidden: Set<String> = []   // lower-cased; guarded by `lock`
    private static let lock = NSLock()

    /// Hides the header `name` from what providers created from now on show. Nothing in the library
    /// calls it.
    package static func hide(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        hidden.insert(name.lowercased())
    }

    /// The names hidden now (lower-cased): a provider reads them once, when it is created, so that its
    /// hot path checks only whether its own copy is empty.
    static var names: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return hidden
    }

    /// `request` without the header fields `names` (lower-cased), whatever their spelling; `request`
    /// itself, not copied, when it has none of them.
    static func removing(_ names: Set<String>, from request: URLRequest) -> URLRequest {
        guard var fields = request.allHTTPHeaderFields, fields.keys.contains(where: { names.contains($0.lowercased()) }) else {
            return request
        }
        fields = fields.filter { !names.contains($0.key.lowercased()) }
        var request = request
        request.allHTTPHeaderFields = fields   // one assignment (see HeaderFields), not a setValue per name
        return request
    }
}
