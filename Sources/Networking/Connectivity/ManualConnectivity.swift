import Foundation

/// A ``Connectivity`` switched by hand: on Linux, where there is no path monitor, the app feeds it from
/// what it knows (its own reachability checks, a platform signal); in tests, it takes a provider offline
/// and back.
///
/// ```swift
/// let connectivity = ManualConnectivity(isOnline: false)
/// let provider = NetworkProvider(connectivity: connectivity)
/// async let user = provider.request(UserAPI.user(id: 1), as: User.self)   // waits: offline
/// connectivity.set(online: true)   // every waiting call sends now
/// ```
///
/// Safe to use from any thread. Every task waiting in ``waitUntilOnline()`` resumes on the transition to
/// online (none is missed, however many wait), and cancelling a waiting task ends its wait at once.
public final class ManualConnectivity: Connectivity {
    private let state: ConnectivityState

    /// Creates a connectivity that is online (the default) or not.
    public init(isOnline: Bool = true) {
        state = ConnectivityState(online: isOnline)
    }

    /// Whether the path is usable now: what ``set(online:)`` last set.
    public var isOnline: Bool { state.isOnline }

    /// Sets whether the path is usable; going online resumes every task waiting for it.
    public func set(online: Bool) {
        state.update(online: online)
    }

    /// Returns once online (at once if it is); throws `CancellationError` when the task is cancelled first.
    public func waitUntilOnline() async throws {
        try await state.waitUntilOnline()
    }

    /// How many tasks are waiting for the path now: tests wait for calls to reach the wait before
    /// switching it.
    public var waitingCount: Int { state.waiting }
}
