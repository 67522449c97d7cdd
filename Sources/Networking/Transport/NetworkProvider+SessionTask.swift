import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// One `URLSessionTask`, driven by the session delegate (see ``DelegateTransfer``): the body (gathered,
    /// written to a download's file, or streamed) and the response, which may be a redirect (URLSession
    /// follows none). A streamed body is returned as soon as an accepted response arrives; the deadline
    /// then no longer applies to it, its reader owns it.
    ///
    /// Every attempt goes this way, plain requests included: only the delegate's callbacks let the size
    /// limit stop a body of undeclared length (chunked, or decompressed from gzip) while it arrives. On
    /// Linux it costs more instructions than a completion handler (see Docs/Performance.md).
    ///
    /// `slot` was taken for it (see ``CallSlots``): the task gives it back when it completes. The
    /// request's idle timeout (`timeoutInterval`, or the configuration's `timeoutIntervalForRequest`) is
    /// URLSession's and starts with the task, so the time a call waited for its slot never counts.
    func transfer(
        _ request: URLRequest,
        slot: CallSlot,
        context: RequestContext,
        deadline: Deadline,
        limits: (delivery: Int, gathered: Int),
        mode: TransferMode,
        followsRedirects: Bool
    ) async throws -> (Data, HTTPURLResponse, DeliveredBody?) {
        let handle = TaskHandle()
        let attemptWatch = self.attemptWatch
        attemptWatch.watch(placed: handle, until: deadline.expiry)
        defer { attemptWatch.unwatch(placed: handle) }
        let delegate = self.delegate
        let request = mode.resumption?.prepared(request) ?? request   // a download that resumes asks for the rest, on every hop
        let download = mode.resumption?.file
        let delivery: DelegateTransfer.Delivery = download.map { .file($0) } ?? (mode.streams ? .stream : .buffer)
        let task: URLSessionTask
        if let file = mode.bodyFile {
            task = try await FileBodyTask.task(for: request, sendingFrom: file, in: urlSession)   // a file gone now throws here
            task.taskDescription = Self.bodyFileTaskDescriptionPrefix + file.path
        } else {
            task = urlSession.dataTask(with: request)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, HTTPURLResponse, DeliveredBody?), any Error>) in
                var onStream: (@Sendable (HTTPURLResponse, BodyChannel) -> Void)?
                if mode.streams {
                    onStream = { response, channel in
                        attemptWatch.unwatch(placed: handle)   // the deadline stops here: a tick must not cancel the stream handed out
                        continuation.resume(returning: (Data(), response, DeliveredBody.stream(channel)))
                    }
                }
                let transfer = DelegateTransfer(
                    delivery: delivery, acceptable: mode.acceptable, followsRedirects: followsRedirects, deliveryLimit: limits.delivery,
                    gatherLimit: limits.gathered, request: request,
                    progress: mode.progress, uploadSize: mode.progress == nil ? 0 : Self.uploadSize(of: request, from: mode.bodyFile),
                    handle: handle, slot: slot, resumption: mode.resumption, onStream: onStream,
                    onComplete: { data, response, error, state, wroteFile in
                        switch Self.outcome(data: data, response: response, error: error, state: state, handle: handle, deadline: deadline) {
                        case .failure(let failure):
                            continuation.resume(throwing: failure)
                        case .success(let (body, http)):
                            // A download's file exists only when the body went to it: not for a redirect or any other
                            // status it did not accept, nor for a cancelled challenge's 401 (its file was removed).
                            let delivered = wroteFile ? download.map { DeliveredBody.file($0) } : nil
                            continuation.resume(returning: (body, http, delivered))
                        }
                    })
                let priority = context.endpoint.priority
                if priority != .normal { task.priority = priority.taskPriority }
                delegate.register(transfer, for: task, context: context)
                handle.start(task)
            }
        } onCancel: {
            handle.cancel()
        }
    }

    /// How the `taskDescription` of a task that sends its body from a file begins; the file's path
    /// follows. For URL protocols such as `MockURLProtocol`, which on Linux are not given an upload
    /// task's body (and where `URLProtocol.setProperty` does not survive into the task).
    package static let bodyFileTaskDescriptionPrefix = "networking-body-file:"

    /// The size of the body `request` sends (from `file` when given), or 0 when unknown.
    private static func uploadSize(of request: URLRequest, from file: URL?) -> Int64 {
        if file != nil { return request.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) } ?? 0 }
        return Int64(request.httpBody?.count ?? 0)
    }

    /// What a finished task means for the attempt: its body and response, or the error to throw.
    static func outcome(
        data: Data?, response: URLResponse?, error: (any Error)?, state: SessionDelegate.TaskState?,
        handle: TaskHandle, deadline: Deadline
    ) -> Result<(Data, HTTPURLResponse), any Error> {
        if let error {
            if error is NetworkError { return .failure(error) }   // the transfer's own verdict: too large, a file not written
            if let refused = state?.serverTrustFailure { return .failure(ServerTrustRefusal(error: refused)) }   // never retried
            let challenged = (error as? URLError)?.code == .cancelled ? state?.challengedResponse : nil
            switch (handle.stop, challenged) {
            case (.expired?, _):
                return .failure(deadline.exceeded)
            case (nil, let challenged?):
                // A cancelled challenge (Linux): the 401 is the answer, with the body that came before it.
                return .success((data ?? Data(), challenged))
            case (.cancelled?, _), (nil, nil):
                return .failure(error)
            }
        }
        guard let httpResponse = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
        return .success((data ?? Data(), httpResponse))
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
}
