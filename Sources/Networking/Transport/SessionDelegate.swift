import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The provider's session delegate: on Linux only a session delegate (not a per-task one) is told
/// about redirects and authentication challenges.
///
/// - Redirects: never followed by URLSession (the answer is always `nil`, so the task completes with the
///   3xx as its response); the provider decides every hop itself (see ``RedirectPolicy``), the same
///   way on every platform.
/// - Challenges (Linux only): a 401 with `WWW-Authenticate: Basic` (or Digest, NTLM, Negotiate) never
///   completes on Linux unless the challenge is answered (swift-corelibs-foundation issue 5456, fixed
///   after Swift 6.3.1), and every answer there fails the task with `cancelled`. The delegate cancels
///   the challenge and keeps its 401 response, which the provider then validates like any other, with
///   the body that arrived before the challenge. Client-certificate challenges, and every other
///   challenge on Apple platforms, keep URLSession's default handling.
/// - Server trust (Apple platforms only: Linux never asks): for a host the ``ServerTrust`` pins, the
///   system's evaluation and then the pins decide (``ServerTrustVerdict``); a refusal is recorded in the
///   task's state, so the call fails with its own error rather than `cancelled`, and a mismatch is told to
///   the call's monitors. The task-level callback is the one implemented, so URLSession sends the
///   session-level server-trust challenge there, with the task it is for.
/// - Attempts: every task is registered with its ``DelegateTransfer``, which gets the task's
///   response, body, upload progress and completion through here.
final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// What the delegate knows about one task, from ``register(_:for:)`` and its callbacks until
    /// ``finish(_:)``.
    struct TaskState {
        /// The 401 of an authentication challenge the delegate cancelled (Linux).
        var challengedResponse: HTTPURLResponse?
        /// The attempt that receives this task's callbacks.
        var transfer: DelegateTransfer?
        /// The call the task belongs to, whose monitors hear of a pin mismatch.
        var context: RequestContext?
        /// Why the delegate refused the server's certificate chain, if it did: the attempt's error.
        var serverTrustFailure: NetworkError?
    }

    /// The pins the server-trust challenges are answered by.
    let serverTrust: ServerTrust
    // @unchecked: `states` is guarded by `lock`.
    private let lock = NSLock()
    private var states: [Int: TaskState] = [:]

    init(serverTrust: ServerTrust = .default) {
        self.serverTrust = serverTrust
    }

    /// Sends `task`'s callbacks to `transfer` (call before resuming it); `context` is the call's.
    func register(_ transfer: DelegateTransfer, for task: URLSessionTask, context: RequestContext? = nil) {
        lock.lock()
        defer { lock.unlock() }
        states[task.taskIdentifier] = TaskState(transfer: transfer, context: context)
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

    /// URLSession follows no redirect: the task completes with the redirect as its response, and the
    /// provider decides the next hop.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
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

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
            // Apple platforms only (not compiled by this repository's CI): the chain goes to the plain-Swift verdict.
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let trust = challenge.protectionSpace.serverTrust
            {
                let host = challenge.protectionSpace.host
                let verdict = serverTrust.verdict(forHost: host, at: Date()) { SystemTrust.evaluate(trust) }
                let disposition = answer(verdict, for: task)
                completionHandler(disposition, disposition == .useCredential ? URLCredential(trust: trust) : nil)
                return
            }
        #endif
        #if canImport(FoundationNetworking)
            if Self.httpAuthenticationMethods.contains(challenge.protectionSpace.authenticationMethod),
                let response = challenge.failureResponse as? HTTPURLResponse
            {
                lock.lock()
                states[task.taskIdentifier, default: TaskState()].challengedResponse = response
                lock.unlock()
                // corelibs answers by cancelling (suspending, resuming) the task, which waits for the session's
                // work queue: never from this queue, which the work queue may be waiting on (BackpressureQueue).
                SessionDelegateQueue.leave { completionHandler(.cancelAuthenticationChallenge, nil) }
                return
            }
            SessionDelegateQueue.leave { completionHandler(.performDefaultHandling, nil) }
        #else
            completionHandler(.performDefaultHandling, nil)
        #endif
    }

    #if canImport(FoundationNetworking)
        /// libcurl sends a request again on a new connection when a reused one died while or after its body went
        /// out, and FoundationNetworking asks here for the body again: a file body's stream starts anew, from the
        /// file's first byte (see ``FileBodyStream``). The provider gives no other body as a stream.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
        ) {
            completionHandler((task.originalRequest?.httpBodyStream as? FileBodyStream).map { FileBodyStream(path: $0.path) })
        }

        /// The challenges a server's 401 raises (the others keep default handling).
        private static let httpAuthenticationMethods: Set<String> = [
            NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
            NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
        ]
    #endif

    /// Answers `task`'s server-trust challenge as `verdict` says. A refusal is recorded in the task's state
    /// first (the task then fails with `cancelled`, and the provider throws the recorded error instead); a
    /// mismatch is told to the call's monitors, before the attempt goes on or fails.
    func answer(_ verdict: ServerTrustVerdict, for task: URLSessionTask) -> URLSession.AuthChallengeDisposition {
        let mismatch: PinMismatch?
        let disposition: URLSession.AuthChallengeDisposition
        switch verdict {
        case .performDefaultHandling:
            return .performDefaultHandling
        case .accept:
            return .useCredential
        case .acceptReporting(let reported):
            (mismatch, disposition) = (reported, .useCredential)
        case .reject(let error, let reported):
            (mismatch, disposition) = (reported, .cancelAuthenticationChallenge)
            lock.lock()
            states[task.taskIdentifier, default: TaskState()].serverTrustFailure = error
            lock.unlock()
        }
        if let mismatch {
            lock.lock()
            let context = states[task.taskIdentifier]?.context
            lock.unlock()
            if let context { context.events.send { $0.pinValidationDidFail(mismatch, context: context) } }
        }
        return disposition
    }
}
