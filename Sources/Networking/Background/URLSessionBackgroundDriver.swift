#if canImport(Darwin)
    import Foundation

    extension BackgroundTransferService {
        /// Creates a service on a background `URLSession` with `identifier`: use the same identifier at
        /// every launch, and make the service early in `application(_:didFinishLaunchingWithOptions:)`.
        ///
        /// The configuration sends launch events (`sessionSendsLaunchEvents`) and has no `URLCache`;
        /// `configure` may change it further (`isDiscretionary`, `allowsCellularAccess`, …).
        ///
        /// - Parameters:
        ///   - identifier: the background session's identifier, unique to the app (and its extensions).
        ///   - folder: a folder only this service uses, that outlives launches (in Application Support).
        ///   - authenticator: attaches the token to each transfer when it is created.
        ///   - configure: changes the background configuration before the session is made.
        /// - Throws: ``NetworkError/fileWriteFailed(_:)`` when the folder cannot be created.
        public init(
            identifier: String, folder: URL, authenticator: AuthInterceptor? = nil, configure: (URLSessionConfiguration) -> Void = { _ in }
        ) throws {
            let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
            configuration.sessionSendsLaunchEvents = true
            configuration.urlCache = nil
            configure(configuration)
            try self.init(session: URLSessionBackgroundDriver(configuration: configuration), folder: folder, authenticator: authenticator)
        }
    }

    /// The Apple glue: a background `URLSession` whose delegate callbacks become ``BackgroundSessionEvent``s.
    /// Compiled on Apple platforms only, and not by this repository's CI; all the logic is in the service.
    final class URLSessionBackgroundDriver: NSObject, BackgroundTransferSession, URLSessionDataDelegate, URLSessionDownloadDelegate,
        @unchecked Sendable
    {
        // @unchecked: `receiver`, `early` and `made` are guarded by `lock`; a URLSession is thread-safe.
        let identifier: String
        private let configuration: URLSessionConfiguration
        private let lock = NSLock()
        private var receiver: (any BackgroundSessionReceiver)?
        /// Events delivered before ``attach(_:)``, in order.
        private var early: [BackgroundSessionEvent] = []
        private var made: URLSession?
        /// Whether ``detach()`` ran: events are no longer kept.
        private var detached = false

        init(configuration: URLSessionConfiguration) {
            self.identifier = configuration.identifier ?? ""
            self.configuration = configuration
            super.init()
        }

        /// The session, made on first use: making it is what reconnects the app to its tasks.
        private var session: URLSession {
            lock.lock()
            defer { lock.unlock() }
            if let made { return made }
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1   // events in order
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            made = session
            return session
        }

        func attach(_ receiver: any BackgroundSessionReceiver) {
            lock.lock()
            self.receiver = receiver
            let events = early
            early = []
            lock.unlock()
            for event in events { receiver.receive(event) }
            _ = session
        }

        func detach() {
            lock.lock()
            receiver = nil
            detached = true
            early = []
            lock.unlock()
        }

        func startTask(_ request: BackgroundSessionTaskRequest) throws {
            let task: URLSessionTask
            switch request.kind {
            case .upload(let file): task = session.uploadTask(with: request.request, fromFile: file)
            case .download: task = session.downloadTask(with: request.request)
            }
            task.taskDescription = request.label
            task.resume()
        }

        func taskLabels() async -> Set<String> {
            let session = self.session
            return await withCheckedContinuation { continuation in
                session.getAllTasks { tasks in continuation.resume(returning: Set(tasks.compactMap(\.taskDescription))) }
            }
        }

        func cancelTask(labelled label: String) {
            session.getAllTasks { tasks in
                for task in tasks where task.taskDescription == label { task.cancel() }
            }
        }

        private func send(_ event: BackgroundSessionEvent) {
            lock.lock()
            guard let receiver else {
                if !detached { early.append(event) }   // after detach(): nobody will take it
                return lock.unlock()
            }
            lock.unlock()
            receiver.receive(event)
        }

        private static func response(of task: URLSessionTask) -> BackgroundSessionResponse? {
            guard let http = task.response as? HTTPURLResponse else { return nil }
            return response(http)
        }

        private static func response(_ http: HTTPURLResponse) -> BackgroundSessionResponse {
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            return BackgroundSessionResponse(statusCode: http.statusCode, headers: headers, url: http.url)
        }

        // MARK: URLSession delegate

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
        ) {
            guard let label = task.taskDescription else { return }
            send(.progress(label: label, completedBytes: totalBytesSent, totalBytes: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
        }

        func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
            totalBytesExpectedToWrite: Int64
        ) {
            guard let label = downloadTask.taskDescription else { return }
            send(.progress(label: label, completedBytes: totalBytesWritten, totalBytes: totalBytesExpectedToWrite > 0 ? totalBytesExpectedToWrite : nil))
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            guard let label = dataTask.taskDescription else { return }
            send(.receivedData(label: label, data))
        }

        func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
            guard let label = downloadTask.taskDescription else { return }
            send(.finishedDownloading(label: label, file: location))   // moved away before this returns (see the receiver)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let label = task.taskDescription else { return }
            let urlError = error.map { ($0 as? URLError) ?? URLError(.unknown) }
            send(.completed(label: label, response: Self.response(of: task), error: urlError))
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            // Background sessions follow redirects themselves while the app is not running (Apple's documentation).
            lock.lock()
            let receiver = self.receiver
            lock.unlock()
            guard let label = task.taskDescription, let receiver else { return completionHandler(request) }
            let current = task.currentRequest ?? task.originalRequest ?? request
            completionHandler(receiver.redirect(label: label, response: Self.response(response), proposed: request, current: current))
        }

        func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            send(.finishedEvents)
        }
    }
#endif
