import Foundation

/// Whether the device has a usable network path, which a ``NetworkProvider`` consults so that a call
/// waits for the network instead of spending its attempts and retry delays on a dead one.
///
/// The provider reads ``isOnline`` before each attempt and when one fails; while it is `false`, the call
/// waits in ``waitUntilOnline()`` (within its deadline) instead of sending, unless its
/// ``OfflineBehavior`` says to fail at once. See the Offline guide.
///
/// ```swift
/// let connectivity = ManualConnectivity(isOnline: false)
/// let provider = NetworkProvider(connectivity: connectivity)
/// connectivity.set(online: true)   // every call waiting for the network resumes
/// ```
public protocol Connectivity: Sendable {
    /// Whether the device has a usable network path now; cheap (read before each attempt and when one fails).
    var isOnline: Bool { get }

    /// Returns once the path is usable (at once if it is); throws `CancellationError` when the waiting
    /// task is cancelled. It must return promptly when cancelled: a call's deadline and cancellation end
    /// its wait by cancelling this one, and wait for it to return.
    func waitUntilOnline() async throws
}

/// A ``Connectivity`` that is always online: the provider never waits for the network, and every
/// failure is handled by the retriers as it comes. The default on platforms without a path monitor
/// (Linux).
public struct AlwaysOnline: Connectivity {
    /// Creates the connectivity.
    public init() {}

    /// Always `true`.
    public var isOnline: Bool { true }

    /// Returns at once.
    public func waitUntilOnline() async throws {}
}

extension Connectivity where Self == AlwaysOnline {
    /// A connectivity that is always online: the provider never waits for the network.
    public static var alwaysOnline: AlwaysOnline { AlwaysOnline() }
}

/// What a call does when the device is offline (see ``Connectivity``): wait for the network within its
/// deadline, or fail at once with ``NetworkError/offline``.
///
/// A cached endpoint answers from the cache first either way, when its policy allows a stale answer to
/// a call the server cannot answer (``CachePolicy/staleIfError(upTo:)``, ``CachePolicy/http`` with
/// `stale-if-error`) or any stored answer (``CachePolicy/cacheElseLoad``, ``CachePolicy/cacheOnly``).
public enum OfflineBehavior: Sendable, Equatable {
    /// The call waits until the path is usable again, then sends (the default). The wait ends with the
    /// call's deadline (``NetworkError/deadlineExceeded(seconds:)``) or its cancellation
    /// (``NetworkError/cancelled``), and spends no attempt.
    case wait
    /// The call throws ``NetworkError/offline`` instead of waiting: when it starts while offline, or when
    /// an attempt fails because the device went offline.
    case fail
}
