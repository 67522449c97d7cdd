import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A stand-in for the part of the operating system that runs background `URLSession` tasks, for Linux
/// and tests: its tasks outlive the "app" (a ``BackgroundTransferService`` and its session), and the
/// events of tasks that end while the app is gone wait for the next launch, as iOS keeps them.
///
/// Its tasks are answered by a ``MockServer`` (its stubs, in the order tasks run); a task runs when the
/// test says (``run(_:)``, ``runAll()``), or as soon as it is started when ``runsTasksAtOnce`` is set.
///
/// ```swift
/// let system = SimulatedBackgroundSystem(server: server)
/// var service = try BackgroundTransferService(session: system.launch(identifier: "transfers"), folder: folder)
/// try await service.start()
/// let record = try await service.upload(VideoAPI.upload(file))
/// system.terminateApp()                       // the app is gone, its task goes on
/// await system.runAll()                       // and ends: its events wait
/// service = try BackgroundTransferService(session: system.launch(identifier: "transfers"), folder: folder)
/// try await service.start()                   // the next launch: the outcome comes through `outcomes`
/// ```
public final class SimulatedBackgroundSystem: @unchecked Sendable {
    // @unchecked: every `var` is guarded by `lock`; events are delivered under it, so in order.

    /// The server that answers the tasks.
    public let server: MockServer
    /// Where the system keeps downloaded bodies until it delivers them.
    public let folder: URL
    private let lock = NSLock()
    private var tasks: [String: SimulatedTask] = [:]
    private var receiver: (any BackgroundSessionReceiver)?
    private var held: [BackgroundSessionEvent] = []
    private var launches = 0
    private var autoRun = false

    /// A system whose tasks `server` answers, keeping its files in `folder` (a new temporary folder by default).
    public init(server: MockServer, folder: URL? = nil) {
        self.server = server
        self.folder = folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("simulated-system-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: self.folder, withIntermediateDirectories: true)   // a write that fails later says why
    }

    /// Whether a task runs as soon as it is started (off by default: tests run tasks when they choose).
    public var runsTasksAtOnce: Bool {
        get { locked { autoRun } }
        set { locked { autoRun = newValue } }
    }

    /// A launch of the app: the session a new ``BackgroundTransferService`` runs on. The previous
    /// launch's session, if any, is gone (as a terminated app's is).
    public func launch(identifier: String) -> SimulatedBackgroundSession {
        locked {
            launches += 1
            receiver = nil
            return SimulatedBackgroundSession(identifier: identifier, system: self, launch: launches)
        }
    }

    /// The app is gone (suspended and then terminated by the system): tasks go on, and their events wait
    /// for the next launch.
    public func terminateApp() {
        locked { receiver = nil }
    }

    /// The user force-quits the app: the app is gone, and the system cancels its tasks; their completions,
    /// `URLError(.cancelled)` with `NSURLErrorBackgroundTaskCancelledReasonKey` 0 (a force-quit), wait for
    /// the next launch, as iOS keeps them.
    public func forceQuitApp() {
        lock.lock()
        receiver = nil
        let labels = tasks.keys.sorted()
        tasks = [:]
        for label in labels {
            let error = URLError(.cancelled, userInfo: ["NSURLErrorBackgroundTaskCancelledReasonKey": 0])
            held.append(.completed(label: label, response: nil, error: error))
        }
        lock.unlock()
    }

    /// The labels of the tasks that have not run yet.
    public var waitingTasks: [String] {
        locked { tasks.filter { !$0.value.isRunning }.map(\.key).sorted() }
    }

    /// Forgets the task labelled `label`, as iOS does when the user force-quits the app or reinstalls it.
    public func forget(_ label: String) {
        locked { _ = tasks.removeValue(forKey: label) }
    }

    /// Runs every task that has not run yet, concurrently, and returns when they all ended.
    public func runAll() async {
        await withTaskGroup(of: Void.self) { group in
            for label in waitingTasks { group.addTask { await self.run(label) } }
        }
    }

    /// Runs the task labelled `label` (if it exists and has not run): sends its request to the server,
    /// follows redirects (as iOS does for background sessions: always, without asking the app), and
    /// delivers its events.
    public func run(_ label: String) async {
        guard let task = claim(label) else { return }
        await task.perform(in: self)
    }

    // MARK: For the session and the task

    func attach(_ receiver: any BackgroundSessionReceiver, launch: Int) {
        lock.lock()
        defer { lock.unlock() }
        guard launch == launches else { return }   // a session of an earlier launch
        self.receiver = receiver
        let events = held
        held = []
        for event in events { receiver.receive(event) }
        if !events.isEmpty { receiver.receive(.finishedEvents) }   // iOS: urlSessionDidFinishEvents after a batch
    }

    func detach(launch: Int) {
        locked { if launch == launches { receiver = nil } }
    }

    func start(_ request: BackgroundSessionTaskRequest) throws {
        if case .upload(let file) = request.kind, !FileManager.default.isReadableFile(atPath: file.path) {
            throw URLError(.fileDoesNotExist)
        }
        let runNow = locked {
            tasks[request.label] = SimulatedTask(request: request)
            return autoRun
        }
        if runNow { Task { await self.run(request.label) } }
    }

    var labels: Set<String> { locked { Set(tasks.keys) } }

    func cancel(_ label: String) {
        lock.lock()
        guard let task = tasks[label] else { return lock.unlock() }
        if task.isRunning {
            task.isCancelled = true   // it ends as cancelled when its exchange returns
            lock.unlock()
            return
        }
        tasks[label] = nil
        lock.unlock()
        deliver(.completed(label: label, response: nil, error: URLError(.cancelled)), ending: nil)
    }

    func isCancelled(_ label: String) -> Bool { locked { tasks[label]?.isCancelled ?? true } }

    /// Follows a redirect, as background sessions do: Apple documents that they do not ask the delegate
    /// (`urlSession(_:task:willPerformHTTPRedirection:…)` is not called for them), the app running or not.
    func redirect(_ label: String, response: BackgroundSessionResponse, proposed: URLRequest, current: URLRequest) -> URLRequest? {
        proposed
    }

    /// Delivers `event` to the app, or keeps it for the next launch; `ending` removes that task first.
    func deliver(_ event: BackgroundSessionEvent, ending label: String?) {
        lock.lock()
        defer { lock.unlock() }
        if let label { tasks[label] = nil }
        if let receiver {
            receiver.receive(event)
        } else if case .progress = event {
            return   // progress nobody watches is not kept
        } else {
            held.append(event)
        }
    }

    private func claim(_ label: String) -> SimulatedTask? {
        locked {
            guard let task = tasks[label], !task.isRunning else { return nil }
            task.isRunning = true
            return task
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// One launch's session of a ``SimulatedBackgroundSystem``.
public final class SimulatedBackgroundSession: BackgroundTransferSession {
    /// The session's identifier.
    public let identifier: String
    private let system: SimulatedBackgroundSystem
    private let launch: Int

    init(identifier: String, system: SimulatedBackgroundSystem, launch: Int) {
        self.identifier = identifier
        self.system = system
        self.launch = launch
    }

    /// Delivers the events kept while the app was gone, then `finishedEvents` if there were any.
    public func attach(_ receiver: any BackgroundSessionReceiver) { system.attach(receiver, launch: launch) }
    /// Creates the task; it runs when the test says, or at once with ``SimulatedBackgroundSystem/runsTasksAtOnce``.
    public func startTask(_ request: BackgroundSessionTaskRequest) throws { try system.start(request) }
    /// The labels of the tasks the system still has.
    public func taskLabels() async -> Set<String> { system.labels }
    /// Cancels the task: it ends with `URLError(.cancelled)`.
    public func cancelTask(labelled label: String) { system.cancel(label) }
    /// Stops delivering events to this launch's receiver: later events wait for the next launch.
    public func detach() { system.detach(launch: launch) }
}
