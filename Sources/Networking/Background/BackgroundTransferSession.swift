import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The seam between a ``BackgroundTransferService`` and the system that runs its transfers: a background
/// `URLSession` on Apple platforms, a simulated system on Linux and in tests
/// (`SimulatedBackgroundSystem` in NetworkingTestSupport).
///
/// The system owns the tasks: they go on while the app is suspended or gone, and a task is known by its
/// ``BackgroundSessionTaskRequest/label`` (a background `URLSessionTask`'s `taskDescription`), which
/// outlives the process. Events reach the ``BackgroundSessionReceiver`` given to ``attach(_:)``, in order.
public protocol BackgroundTransferSession: Sendable {
    /// The identifier of the session (a background `URLSessionConfiguration`'s): the same at every launch,
    /// so that the system hands this launch the tasks of the previous ones.
    var identifier: String { get }

    /// Starts delivering events to `receiver`, the events of transfers that finished while the app was
    /// gone first. Called once, by ``BackgroundTransferService/start()``.
    func attach(_ receiver: any BackgroundSessionReceiver)

    /// Creates the task `request` describes and resumes it.
    ///
    /// - Throws: when the system refuses the task (a body file it cannot read, a session already invalidated).
    func startTask(_ request: BackgroundSessionTaskRequest) throws

    /// The labels of the tasks the system still knows (running, suspended, or finished with events not yet
    /// delivered).
    func taskLabels() async -> Set<String>

    /// Cancels the task labelled `label`; its completion arrives as an event with `URLError(.cancelled)`.
    func cancelTask(labelled label: String)

    /// Stops delivering events to the receiver given to ``attach(_:)``: the service stopped. The system's
    /// tasks go on; their events are not kept for this session (a later launch gets them from the system).
    /// Called by ``BackgroundTransferService/stop()``.
    func detach()
}

extension BackgroundTransferSession {
    /// Does nothing: a session that keeps no receiver.
    public func detach() {}
}

/// What a ``BackgroundTransferSession`` tells the service about its tasks.
public protocol BackgroundSessionReceiver: AnyObject, Sendable {
    /// Takes one event; called in the order the session delivers them. For
    /// ``BackgroundSessionEvent/finishedDownloading(label:file:)`` the file is moved away before this returns
    /// (the system removes it afterwards).
    func receive(_ event: BackgroundSessionEvent)

    /// The request to send after a redirect, or `nil` to stop and take the redirect as the answer: the
    /// package's redirect rules (``RedirectBehavior``), decided for the task labelled `label`.
    ///
    /// - Parameters:
    ///   - label: the task's label (its record's id).
    ///   - response: the redirect response.
    ///   - proposed: the request the system would send next.
    ///   - current: the request that got the redirect.
    func redirect(label: String, response: BackgroundSessionResponse, proposed: URLRequest, current: URLRequest) -> URLRequest?
}

/// One task for a ``BackgroundTransferSession`` to create.
public struct BackgroundSessionTaskRequest: Sendable {
    /// What kind of task it is.
    public enum Kind: Sendable, Equatable {
        /// An upload task sending the file at this URL as the body.
        case upload(fromFile: URL)
        /// A download task, whose body the system writes to a temporary file.
        case download
    }

    /// The label that names the task across launches (its `taskDescription`).
    public var label: String
    /// The request, the token already in it.
    public var request: URLRequest
    /// An upload or a download.
    public var kind: Kind

    /// Creates a task description.
    public init(label: String, request: URLRequest, kind: Kind) {
        self.label = label
        self.request = request
        self.kind = kind
    }
}

/// The status and header fields of a response a background task got.
public struct BackgroundSessionResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The header fields.
    public var headers: [String: String]
    /// The URL that gave the response (after any redirect the system followed).
    public var url: URL?

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }

    /// The value of the header field `name`, matched case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// What happened to a task of a ``BackgroundTransferSession``.
public enum BackgroundSessionEvent: Sendable {
    /// Bytes sent (an upload) or received (a download) so far, and the total when known.
    case progress(label: String, completedBytes: Int64, totalBytes: Int64?)
    /// Bytes of an upload's response body.
    case receivedData(label: String, Data)
    /// A download's body, whole, in this temporary file.
    case finishedDownloading(label: String, file: URL)
    /// The task ended: with the response it got, or with a transport error (`URLError(.cancelled)` when
    /// cancelled).
    case completed(label: String, response: BackgroundSessionResponse?, error: URLError?)
    /// The system delivered every event it held for the app (`urlSessionDidFinishEvents`).
    case finishedEvents
}
