import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a response with an unacceptable status into the app's own error, or returns `nil` to throw
/// ``NetworkError/invalidStatusCode(_:)``. Real APIs put their error codes in the body.
public typealias ErrorResponseMapper = @Sendable (Response) -> (any Error)?

/// Sends endpoints through `URLSession` and runs every attempt through the interceptors:
/// build → adapt → send → validate → on error ask the retriers → retry or throw.
///
/// The provider owns its `URLSession` (made from the configuration you give it, with its own session
/// delegate, which strips credentials from cross-origin redirects) and invalidates it when released.
///
/// ```swift
/// let provider = NetworkProvider(interceptor: auth, errorMapper: { response in
///     try? JSONDecoder().decode(APIError.self, from: response.data)
/// })
/// let user = try await provider.request(UserAPI.user(id: 1), as: User.self)
/// ```
public final class NetworkProvider: NetworkProviding {
    /// The default hard cap on attempts per call (the first attempt plus five retries).
    public static let defaultMaximumAttempts = 6
    /// The default overall deadline of a call, in seconds: 120. It covers every attempt, retry delay
    /// and redirect of the call; see ``Endpoint/deadline``.
    public static let defaultDeadline: TimeInterval = 120
    /// The default largest response body of a call, in bytes: 64 MiB. See ``Endpoint/maximumResponseSize``.
    public static let defaultMaximumResponseSize = 64 * 1_024 * 1_024

    /// The session every request is sent through.
    public let session: URLSession
    /// The provider-wide interceptor; it runs before any per-call interceptor (adapt and retry).
    public let interceptor: (any RequestInterceptor)?
    /// The hard cap on attempts per call, which no retrier can exceed.
    public let maximumAttempts: Int
    /// The overall deadline of a call whose endpoint names none, in seconds (`.infinity` for none).
    public let deadline: TimeInterval
    /// The largest response body of a call whose endpoint names none, in bytes.
    public let maximumResponseSize: Int
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder
    private let errorMapper: ErrorResponseMapper?
    private let delegate: SessionDelegate
    private let attemptWatch = AttemptWatch()
    private let events: EventDispatcher
    private let sleep: @Sendable (TimeInterval) async throws -> Void

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - configuration: the session configuration (copied); `.default` unless you need your own.
    ///   - interceptor: the provider-wide interceptor, e.g. an ``AuthInterceptor``.
    ///   - encoder: encodes ``RequestBody/json(_:encoder:)`` bodies that name no encoder.
    ///   - decoder: decodes ``request(_:as:interceptor:)`` results.
    ///   - maximumAttempts: the hard cap on attempts per call, at least 1; default
    ///     ``defaultMaximumAttempts`` (6). When the last attempt the cap allows fails, the retriers are
    ///     not asked and the call throws ``NetworkError/tooManyAttempts(_:lastError:)`` (or, with a cap
    ///     of 1, the attempt's own error).
    ///   - deadline: the overall deadline of a call whose ``Endpoint/deadline`` is `nil`, in seconds;
    ///     ``defaultDeadline`` (120 s) by default, `.infinity` for none. When it passes, the call throws
    ///     ``NetworkError/deadlineExceeded(seconds:)``, whatever the server is doing.
    ///   - maximumResponseSize: the largest response body of a call whose
    ///     ``Endpoint/maximumResponseSize`` is `nil`, in bytes; ``defaultMaximumResponseSize`` (64 MiB)
    ///     by default. A larger one ends the call with ``NetworkError/responseTooLarge(limit:)``.
    ///   - errorMapper: turns an unacceptable response into the app's error; see ``ErrorResponseMapper``.
    ///   - monitors: observers of every call; see ``EventMonitor`` for when they are called.
    ///   - sleep: waits out a ``RetryResult/retryWithDelay(_:)``; by default `Task.sleep`. Tests pass one
    ///     that records the delay and returns at once. It must throw when the task is cancelled.
    public init(
        configuration: URLSessionConfiguration = .default,
        interceptor: (any RequestInterceptor)? = nil,
        encoder: JSONEncoder = JSONEncoder(),
        decoder: JSONDecoder = JSONDecoder(),
        maximumAttempts: Int = NetworkProvider.defaultMaximumAttempts,
        deadline: TimeInterval = NetworkProvider.defaultDeadline,
        maximumResponseSize: Int = NetworkProvider.defaultMaximumResponseSize,
        errorMapper: ErrorResponseMapper? = nil,
        monitors: [any EventMonitor] = [],
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = NetworkProvider.taskSleep
    ) {
        self.delegate = SessionDelegate()
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.interceptor = interceptor
        self.encoder = encoder
        self.decoder = decoder
        self.maximumAttempts = max(1, maximumAttempts)
        self.deadline = deadline
        self.maximumResponseSize = max(maximumResponseSize, 0)
        self.errorMapper = errorMapper
        self.events = EventDispatcher(monitors)
        self.sleep = sleep
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> T {
        try decode(try await response(endpoint, interceptor: interceptor), as: type)
    }

    public func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)? = nil
    ) async throws -> Response {
        try await response(endpoint, interceptor: interceptor, refreshing: nil)
    }

    /// The response body decoded as `type` with the provider's decoder.
    func decode<T: Decodable>(_ response: Response, as type: T.Type) throws -> T {
        do {
            return try decoder.decode(T.self, from: response.data)
        } catch let error as DecodingError {
            throw NetworkError.decodingFailed(type: String(describing: T.self), error: error)
        }
    }

    /// Sends one call; `refreshing` names the ``AuthInterceptor`` whose token refresh this call is.
    func response(
        _ endpoint: some Endpoint,
        interceptor: (any RequestInterceptor)?,
        refreshing: UUID?
    ) async throws -> Response {
        let started = DispatchTime.now()
        let context = RequestContext(endpoint: endpoint, events: events, provider: self, refreshing: refreshing)
        var sent: URLRequest?
        var attempts = 0
        do {
            let deadline = try Deadline(seconds: endpoint.deadline ?? self.deadline)
            let built = try endpoint.urlRequest(encoder: encoder)
            sent = built
            if !events.isEmpty { events.send { $0.requestDidBuild(built, context: context) } }
            let response = try await run(built, for: endpoint, context: context, chain: chain(with: interceptor), deadline: deadline,
                                         sent: &sent, attempts: &attempts)
            if !events.isEmpty {
                let (last, count, duration) = (sent ?? built, attempts, started.secondsElapsed)
                events.send { $0.requestDidFinish(last, result: .success(response), attempts: count, duration: duration, context: context) }
            }
            return response
        } catch {
            if !events.isEmpty, let last = sent {
                let (count, duration) = (attempts, started.secondsElapsed)
                events.send { $0.requestDidFinish(last, result: .failure(error), attempts: count, duration: duration, context: context) }
            }
            throw error
        }
    }

    /// The attempt loop: adapt → send → validate → on error ask the retriers → retry or throw.
    private func run(
        _ built: URLRequest,
        for endpoint: some Endpoint,
        context: RequestContext,
        chain: (any RequestInterceptor)?,
        deadline: Deadline,
        sent: inout URLRequest?,
        attempts: inout Int
    ) async throws -> Response {
        while true {
            attempts += 1
            if Task.isCancelled { throw NetworkError.cancelled }
            if deadline.hasPassed { throw deadline.exceeded }
            var request = built
            var response: Response?
            do {
                if let chain {
                    request = try await chain.adapt(built, for: context)
                    if !events.isEmpty { events.send { [request] in $0.requestDidAdapt(request, context: context) } }
                }
                sent = request
                if chain != nil {
                    try WireValidation.check(request)   // the endpoint's own parts were checked when built
                    if deadline.hasPassed { throw deadline.exceeded }   // the interceptors may have waited (a refresh)
                }
                if !events.isEmpty { events.send { [request] in $0.taskDidStart(request, context: context) } }
                let taskStarted = DispatchTime.now()
                let limit = endpoint.maximumResponseSize ?? maximumResponseSize
                let (data, httpResponse) = try await send(request, builtAs: chain == nil ? nil : built, deadline: deadline, sizeLimit: limit)
                try Self.checkSize(of: data, declaredBy: httpResponse, for: request, limit: limit)
                let received = Response(data: data, httpResponse: httpResponse, request: request)
                response = received
                if !events.isEmpty {
                    let duration = taskStarted.secondsElapsed
                    events.send { $0.responseDidArrive(received, duration: duration, context: context) }
                }
                let validated = try validate(received, for: endpoint, context: context)
                RefreshRun.current?.record(status: nil, of: context)
                return validated
            } catch {
                RefreshRun.current?.record(status: response.map { endpoint.acceptableStatusCodes.contains($0.statusCode) ? nil : $0.statusCode } ?? nil,
                                           of: context)
                let error = Self.normalize(error)
                switch error {
                case NetworkError.cancelled, NetworkError.invalidRequest, NetworkError.deadlineExceeded, NetworkError.responseTooLarge:
                    throw error   // never worth another attempt
                default: break
                }
                guard let chain else { throw error }
                // The cap allows no other attempt: the retriers are not asked, so none starts work
                // (such as a token refresh) whose result would be thrown away.
                guard attempts < maximumAttempts else {
                    throw attempts > 1 ? NetworkError.tooManyAttempts(attempts, lastError: error) : error
                }
                let decision = await chain.retry(request, dueTo: error, response: response, context: context)
                events.send { [attempts] in $0.retryDidDecide(decision, attempt: attempts, error: error, context: context) }
                if Task.isCancelled { throw NetworkError.cancelled }
                switch decision {
                case .doNotRetry:
                    throw error
                case .doNotRetryWithError(let replacement):
                    throw Self.normalize(replacement)
                case .retry:
                    break
                case .retryWithDelay(let seconds):
                    guard deadline.allows(delay: seconds) else { throw deadline.exceeded }
                    if seconds > 0 {
                        do { try await sleep(seconds) } catch { throw NetworkError.cancelled }
                    }
                }
                context.recordRetry()
            }
        }
    }

    /// The provider's interceptor followed by the call's, or whichever exists.
    private func chain(with callInterceptor: (any RequestInterceptor)?) -> (any RequestInterceptor)? {
        switch (interceptor, callInterceptor) {
        case let (provider?, call?): return Interceptor(interceptors: [provider, call])
        case let (provider?, nil): return provider
        case let (nil, call?): return call
        case (nil, nil): return nil
        }
    }

    private func validate(_ response: Response, for endpoint: some Endpoint, context: RequestContext) throws -> Response {
        guard endpoint.acceptableStatusCodes.contains(response.statusCode) else {
            let error = errorMapper?(response) ?? NetworkError.invalidStatusCode(response.statusCode)
            events.send { $0.validationDidFail(response, error: error, context: context) }
            throw error
        }
        return response
    }

    /// Sends one request; cancelling the calling task cancels the `URLSessionTask` at once.
    /// When `built` (the request before adaptation) is given, the headers the interceptors added are
    /// removed if a redirect leaves the request's origin (see ``RedirectPolicy``). A redirect that would
    /// send the body to another origin ends the attempt with
    /// ``NetworkError/redirectWouldForwardBody(statusCode:)``. On Linux, where URLSession drops the body
    /// of a redirect it follows, a same-origin 307/308 with a body is sent again here, body included.
    private func send(
        _ request: URLRequest,
        builtAs built: URLRequest?,
        deadline: Deadline,
        sizeLimit: Int
    ) async throws -> (Data, HTTPURLResponse) {
        var next = request
        for _ in 0..<16 {   // resends of same-origin 307/308s; each transfer follows at most 16 redirects itself
            if deadline.hasPassed { throw deadline.exceeded }
            let (data, response, refused) = try await transfer(next, builtAs: built, deadline: deadline, sizeLimit: sizeLimit)
            switch refused {
            case nil, .follow?: return (data, response)
            case .refuse(let statusCode)?: throw NetworkError.redirectWouldForwardBody(statusCode: statusCode)
            case .resend(let redirected)?: next = redirected
            case .fail(let code)?: throw URLError(code)
            }
        }
        throw URLError(.httpTooManyRedirects)
    }

    /// One `URLSessionTask`: the body, the response, and the redirect the session delegate did not let
    /// it follow, if any (the response is then that redirect's).
    private func transfer(
        _ request: URLRequest,
        builtAs built: URLRequest?,
        deadline: Deadline,
        sizeLimit: Int
    ) async throws -> (Data, HTTPURLResponse, RedirectPolicy.Decision?) {
        let handle = TaskHandle(request: request, declaredSizeLimit: sizeLimit)
        attemptWatch.watch(handle, until: deadline.expiry)
        defer { attemptWatch.unwatch(handle) }
        let delegate = self.delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, HTTPURLResponse, RedirectPolicy.Decision?), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    let state = handle.startedTask.flatMap(delegate.finish(_:))
                    if let error {
                        let challenged = (error as? URLError)?.code == .cancelled ? state?.challengedResponse : nil
                        switch (handle.stop, challenged) {
                        case (.tooLarge?, _):
                            continuation.resume(throwing: NetworkError.responseTooLarge(limit: sizeLimit))
                        case (.expired?, _):
                            continuation.resume(throwing: deadline.exceeded)
                        case (nil, let challenged?):
                            continuation.resume(returning: (Data(), challenged, nil))   // a cancelled challenge (Linux): the 401 is the answer
                        default:
                            continuation.resume(throwing: error)
                        }
                    } else if let httpResponse = response as? HTTPURLResponse {
                        continuation.resume(returning: (data ?? Data(), httpResponse, state?.refusedRedirect))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                if let built { delegate.remember(builtRequest: built, for: task) }
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    /// Throws ``NetworkError/responseTooLarge(limit:)`` when the body, or the `Content-Length` the server
    /// declared for a body it sends, is over `limit` bytes. (A HEAD, a 1xx, 204 or 304 declares the
    /// length of a body it does not send.)
    ///
    /// A declared length is also watched while the body arrives (see `TaskHandle.check()`), which bounds
    /// memory; a body of undeclared length is only judged here, once URLSession has handed it over.
    static func checkSize(of data: Data, declaredBy response: HTTPURLResponse, for request: URLRequest, limit: Int) throws {
        if data.count > limit { throw NetworkError.responseTooLarge(limit: limit) }
        let status = response.statusCode
        guard request.httpMethod != "HEAD", status >= 200, status != 204, status != 304,
              let declared = response.value(forHTTPHeaderField: "Content-Length"),
              let length = Int(declared.trimmingCharacters(in: .whitespaces)), length > limit
        else { return }
        throw NetworkError.responseTooLarge(limit: limit)
    }

    /// Whether a response to `request` declares the length of a body it sends: not for a HEAD, nor for a
    /// conditional request, whose 304 may declare the length of a body it does not send.
    static func declaresItsBody(_ request: URLRequest) -> Bool {
        guard request.httpMethod != "HEAD" else { return false }
        for name in ["If-None-Match", "If-Modified-Since", "If-Range", "If-Match", "If-Unmodified-Since"]
        where request.value(forHTTPHeaderField: name) != nil {
            return false
        }
        return true
    }

    /// Maps what URLSession and Swift concurrency throw to ``NetworkError`` where one fits.
    static func normalize(_ error: any Error) -> any Error {
        if error is CancellationError || Task.isCancelled { return NetworkError.cancelled }
        if let urlError = error as? URLError {
            return urlError.code == .cancelled ? NetworkError.cancelled : NetworkError.transportFailed(urlError)
        }
        return error
    }

    /// The default `sleep`: `Task.sleep`, which throws when the task is cancelled. A delay that is
    /// negative, zero or not a number does not wait; an infinite or longer one waits a day.
    public static let taskSleep: @Sendable (TimeInterval) async throws -> Void = { seconds in
        try await Task.sleep(nanoseconds: nanoseconds(forDelay: seconds))
    }

    /// `seconds` as nanoseconds for `Task.sleep`, from 0 to a day: never traps, whatever the value.
    static func nanoseconds(forDelay seconds: TimeInterval) -> UInt64 {
        guard seconds > 0 else { return 0 }   // also NaN
        return UInt64(min(seconds, 86_400) * 1_000_000_000)
    }
}

extension DispatchTime {
    /// Seconds from this time until now.
    var secondsElapsed: TimeInterval {
        Double(DispatchTime.now().uptimeNanoseconds - uptimeNanoseconds) / 1_000_000_000
    }
}

/// The `URLSessionTask` of one attempt, so that cancelling the calling task can cancel it, whichever
/// of the two happens first.
private final class TaskHandle: WatchedAttempt, @unchecked Sendable {
    // @unchecked: `task`, `isCancelled`, `expired` and `tooLarge` are guarded by `lock`.
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var isCancelled = false
    private var expired = false
    private var tooLarge = false
    /// The request sent, to tell (only when a declared length is over the limit) whether its response
    /// declares a body it sends.
    private let request: URLRequest
    /// The largest body the response may declare.
    private let declaredSizeLimit: Int

    init(request: URLRequest, declaredSizeLimit: Int) {
        self.request = request
        self.declaredSizeLimit = declaredSizeLimit
    }

    /// Why the task was stopped, if it was.
    enum Stop {
        /// The calling task was cancelled (``cancel()``); this wins over the others.
        case cancelled
        /// ``check()`` found the declared body over the limit.
        case tooLarge
        /// The call's deadline passed (``expire()``).
        case expired
    }

    /// Why the task was stopped, if it was, read once when it completes.
    var stop: Stop? {
        lock.lock(); defer { lock.unlock() }
        if isCancelled { return .cancelled }
        if tooLarge { return .tooLarge }
        return expired ? .expired : nil
    }

    /// Cancels the task once the response has declared a body larger than the limit
    /// (`countOfBytesExpectedToReceive` is set when the headers arrive, long before the body has).
    func check() {
        lock.lock()
        let task = self.task
        lock.unlock()
        guard let task, task.countOfBytesExpectedToReceive > Int64(declaredSizeLimit),
              NetworkProvider.declaresItsBody(request)   // looked at only now: header look-ups are not free
        else { return }
        lock.lock()
        tooLarge = true
        lock.unlock()
        task.cancel()
    }

    /// The task, once started.
    var startedTask: URLSessionTask? {
        lock.lock(); defer { lock.unlock() }
        return task
    }

    /// The call's deadline passed: cancels the task.
    func expire() {
        lock.lock()
        expired = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }

    /// Resumes `task`, and cancels it at once if the calling task was cancelled or the deadline
    /// passed before it started (it then completes with `cancelled`).
    func start(_ task: URLSessionTask) {
        lock.lock()
        self.task = task
        let stopped = isCancelled || expired
        lock.unlock()
        task.resume()
        if stopped { task.cancel() }
    }

    func cancel() {
        lock.lock()
        isCancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
