import Foundation

/// The names of the headers that carry a token because an ``AuthInterceptor`` writes them
/// (`Authorization`, `accessToken`, `X-Auth-Token`, ...), for every ``Redactor`` in the process.
///
/// An interceptor registers its header when it is created, so a ``NetworkLogger`` or a
/// `cURLDescription` hides it without the app listing it, even a logger made before the interceptor.
/// Names are compared case-insensitively. The registry only grows: a name that once carried a token
/// stays hidden. It is read only when something is logged or described, never on the request path.
enum SecretHeaderNames {
    // Guarded by `lock`; holds lower-cased names.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var names: Set<String> = []

    /// Hides `name` in every redactor from now on.
    static func register(_ name: String) {
        let lowered = name.lowercased()
        lock.lock()
        defer { lock.unlock() }
        names.insert(lowered)
    }

    /// Whether `name` was registered, in any letter case.
    static func contains(_ name: String) -> Bool {
        let lowered = name.lowercased()
        lock.lock()
        defer { lock.unlock() }
        return names.contains(lowered)
    }
}
