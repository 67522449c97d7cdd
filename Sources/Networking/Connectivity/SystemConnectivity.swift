// Not on watchOS: from watchOS 9 an ordinary app's path monitor stays `.unsatisfied` although URLSession
// works (Apple TN3135), so every call would wait out its deadline.
#if canImport(Network) && !os(watchOS)
    import Foundation
    import Network

    /// The device's connectivity as the system's path monitor (`NWPathMonitor`) reports it: the default
    /// ``Connectivity`` of a ``NetworkProvider`` on Apple platforms. One monitor serves every provider
    /// (``shared``); until its first report, the path counts as usable.
    ///
    /// A path counts as unusable only when the monitor says `.unsatisfied` (`.requiresConnection`, such as
    /// an on-demand VPN, is usable: an attempt brings it up).
    public final class SystemConnectivity: Connectivity, @unchecked Sendable {
        // @unchecked: `monitor` is set up in `init` and never touched again; `state` guards itself.
        /// The one monitor every provider consults by default.
        public static let shared = SystemConnectivity()

        private let state = ConnectivityState(online: true)   // unknown until the first report: online
        private let monitor = NWPathMonitor()

        private init() {
            monitor.pathUpdateHandler = { [state] path in
                switch path.status {
                case .satisfied: state.update(.satisfied)
                case .unsatisfied: state.update(.unsatisfied)
                case .requiresConnection: state.update(.requiresConnection)
                @unknown default: state.update(.satisfied)
                }
            }
            monitor.start(queue: DispatchQueue(label: "Networking.SystemConnectivity", qos: .utility))
        }

        /// Whether the monitor's last report (online before the first) says the path is usable.
        public var isOnline: Bool { state.isOnline }

        /// Returns once the path is usable (at once if it is); throws `CancellationError` when the task is
        /// cancelled first.
        public func waitUntilOnline() async throws {
            try await state.waitUntilOnline()
        }
    }
#endif
