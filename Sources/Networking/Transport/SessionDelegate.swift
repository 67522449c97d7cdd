import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The provider's session delegate: on Linux only a session delegate (not a per-task one) is told
/// about redirects and authentication challenges.
///
/// - Redirects: applies ``RedirectPolicy`` and remembers, per task, a redirect it did not let
///   URLSession follow, for the provider to act on when the task completes.
/// - Challenges (Linux only): a 401 with `WWW-Authenticate: Basic` (or Digest, NTLM, Negotiate) never
///   completes on Linux unless the challenge is answered (swift-corelibs-foundation issue 5456, fixed
///   after Swift 6.3.1), and every answer there fails the task with `cancelled`. The delegate cancels
///   the challenge and keeps its 401 response, which the provider then validates like any other, with
///   the body that arrived before the challenge. Server-trust and client-certificate challenges, and
///   every challenge on Apple platforms, keep URLSession's default handling.
/// - Attempts: every attempt's task is registered with its ``DelegateTransfer``, which gets the task's
///   response, body, upload progress and completion through here.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// The most redirects one task follows (as browsers do, about 20; URLSession on Linux has no limit).
    static let maximumRedirects = 16

    /// What the delegate knows about one task, from ``register(_:builtRequest:for:)`` and its callbacks
    /// until ``finish(_:)``.
    struct TaskState {
        /// The request as the endpoint built it, before the interceptors adapted it.
        var built: URLRequest?
        /// Redirects followed so far.
        var redirects = 0
        /// The redirect the task was not allowed to follow; the task completed with its response.
        var refusedRedirect: RedirectPolicy.Decision?
        /// The 401 of an authentication challenge the delegate cancelled (Linux).
        var challengedResponse: HTTPURLResponse?
        /// The attempt that receives this task's callbacks.
        var transfer: DelegateTransfer?
    }

    // @unchecked: `states` is guarded by `lock`.
    private let lock = NSLock()
    private var states: [Int: TaskState] = [:]

    /// Sends `task`'s callbacks to `transfer` (call before resuming it), and remembers the request as the
    /// endpoint built it, before the interceptors adapted it, when they did. Which headers they added is
    /// worked out only if a redirect happens.
    func register(_ transfer: DelegateTransfer, builtRequest: URLRequest?, for task: URLSessionTask) {
        lock.lock()
        defer { lock.unlock() }
        states[task.taskIdentifier] = TaskState(built: builtRequest, transfer: transfer)
    }

    private func transfer(of task: URLSessionTask) -> DelegateTransfer? {
        lock.lock()
        defer { lock.unlock() }
        return states[task.taskIdentifier]?.transfer
    }

    /// What the delegate learned about `task`, forgotten: call once, when the task completed.
    func finish(_ task: URLSessionTask) -> TaskState? {
        lock.lock()
        defer { lock.unlock() }
        return states.removeValue(forKey: task.taskIdentifier)
    }

    /// The headers the interceptors added to `task`'s request, and the number of this redirect.
    private func countRedirect(of task: URLSessionTask) -> (adaptedHeaders: Set<String>, count: Int) {
        lock.lock()
        var state = states[task.taskIdentifier, default: TaskState()]
        state.redirects += 1
        states[task.taskIdentifier] = state
        lock.unlock()
        guard let built = state.built, let sent = task.originalRequest else { return ([], state.redirects) }
        return (RedirectPolicy.headersAdded(by: sent, to: built), state.redirects)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let (adaptedHeaders, count) = countRedirect(of: task)
        let decision =
            count > Self.maximumRedirects
            ? .fail(.httpTooManyRedirects)
            : RedirectPolicy.decision(
                for: request, statusCode: response.statusCode,
                from: task.currentRequest ?? task.originalRequest, adaptedHeaders: adaptedHeaders)
        if case .follow(let next) = decision {
            completionHandler(next)
            return
        }
        lock.lock()
        states[task.taskIdentifier, default: TaskState()].refusedRedirect = decision
        lock.unlock()
        // Not following makes the task complete with the redirect response itself.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(transfer(of: dataTask)?.didReceive(response, task: dataTask) ?? .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(of: dataTask)?.didReceive(data, task: dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        transfer(of: task)?.didSend(totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = finish(task), let transfer = state.transfer else { return }
        transfer.didComplete(task, error: error, state: state)
    }

    #if canImport(FoundationNetworking)
        /// The challenges a server's 401 raises (the others keep default handling).
        private static let httpAuthenticationMethods: Set<String> = [
            NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
            NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
        ]

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            guard Self.httpAuthenticationMethods.contains(challenge.protectionSpace.authenticationMethod),
                let response = challenge.failureResponse as? HTTPURLResponse
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            lock.lock()
            states[task.taskIdentifier, default: TaskState()].challengedResponse = response
            lock.unlock()
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    #endif
}
