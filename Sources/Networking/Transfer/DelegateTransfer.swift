import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt, driven by the session delegate's callbacks: a plain request, an upload with progress, a
/// download to a file, or a streamed response. The delegate calls it serially, on the session's delegate
/// queue. The size limit is enforced here, as the body arrives: against the declared `Content-Length`
/// when the response arrives, then against the bytes received (after gzip decoding, which URLSession does).
///
/// The response's status decides where the body goes. An accepted status sends it to the ``Delivery``;
/// any other status gathers it in memory, up to the size limit, for validation and the error mapper, as
/// for a plain request.
final class DelegateTransfer: @unchecked Sendable {
    // @unchecked: every `var` is touched only from the session delegate's serial callbacks.

    /// Where an accepted body goes.
    enum Delivery {
        /// Gathered in memory (an upload with progress).
        case buffer
        /// Handed to a ``ResponseStream`` as it arrives.
        case stream
        /// Written to this new file (a download); the file is removed if the attempt fails.
        case file(URL)
    }

    /// Called once, when the task completed (as a completion handler would be), unless its body went to a
    /// stream: the gathered body (empty when it went to a file), the response, the error, and what the
    /// session delegate learned about the task (a redirect it refused, a challenge it cancelled).
    typealias Completion = @Sendable (Data, URLResponse?, (any Error)?, SessionDelegate.TaskState?) -> Void

    private let delivery: Delivery
    private let acceptable: Set<Int>
    private let sizeLimit: Int
    /// The request sent, to tell (only when a declared length is over the limit) whether its response
    /// declares a body it sends.
    private let request: URLRequest
    private let progress: ProgressReporter?
    private let attempt: Int
    /// The size of the body sent, for progress (0 when unknown or nothing is reported).
    private let uploadSize: Int64
    private let handle: TaskHandle
    /// Called when an accepted response to a ``Delivery/stream`` arrives, with the channel its body will
    /// flow through; the attempt's caller gets the stream from here, before the body has arrived.
    private let onStream: @Sendable (HTTPURLResponse, BodyChannel) -> Void
    private let onComplete: Completion

    private var gathered = Data()
    private var received: Int64 = 0
    private var channel: BodyChannel?
    private var file: FileHandle?
    private var fileError: (any Error)?
    /// The most upload progress reported so far.
    private var sent: Int64 = 0
    /// The body went over the limit; the task may still complete normally (its last callbacks were queued).
    private var overLimit = false

    init(
        delivery: Delivery, acceptable: Set<Int>, sizeLimit: Int, request: URLRequest, progress: ProgressReporter?, attempt: Int,
        uploadSize: Int64, handle: TaskHandle, onStream: @escaping @Sendable (HTTPURLResponse, BodyChannel) -> Void, onComplete: @escaping Completion
    ) {
        self.delivery = delivery
        self.acceptable = acceptable
        self.sizeLimit = sizeLimit
        self.request = request
        self.progress = progress
        self.attempt = attempt
        self.uploadSize = uploadSize
        self.handle = handle
        self.onStream = onStream
        self.onComplete = onComplete
    }

    func didReceive(_ response: URLResponse, task: URLSessionDataTask) -> URLSession.ResponseDisposition {
        guard let http = response as? HTTPURLResponse, acceptable.contains(http.statusCode) else {
            return checkDeclaredLength(of: response) ? .allow : .cancel
        }
        switch delivery {
        case .buffer:
            return checkDeclaredLength(of: response) ? .allow : .cancel
        case .stream:
            let channel = BodyChannel(limit: sizeLimit)
            channel.attach(task)
            self.channel = channel
            onStream(http, channel)
        case .file(let url):
            guard checkDeclaredLength(of: response) else { return .cancel }
            do {
                guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                }
                file = try FileHandle(forWritingTo: url)
            } catch {
                fileError = error
                return .cancel
            }
            report(0, of: response.expectedContentLength)
        }
        return .allow
    }

    func didReceive(_ data: Data, task: URLSessionDataTask) {
        received += Int64(data.count)
        guard !overLimit else { return }
        if let channel {
            if !channel.send(data) { stopForSize() }
            return
        }
        guard received <= Int64(sizeLimit) else {
            stopForSize()
            return
        }
        if let file {
            do {
                try file.write(contentsOf: data)
            } catch {
                fileError = error
                task.cancel()
                return
            }
            report(received, of: task.response?.expectedContentLength ?? -1)
        } else {
            gathered.append(data)
        }
    }

    func didSend(_ totalSent: Int64, of expected: Int64) {
        sent = max(sent, totalSent)
        report(sent, of: expected)
    }

    func didComplete(_ task: URLSessionTask, error: (any Error)?, state: SessionDelegate.TaskState) {
        var error = error
        if let file {
            do {
                try file.close()
            } catch {
                fileError = fileError ?? error
            }
        }
        if let fileError { error = NetworkError.fileWriteFailed(fileError) }
        if overLimit { error = NetworkError.responseTooLarge(limit: sizeLimit) }
        if error != nil, case .file(let url) = delivery {
            try? FileManager.default.removeItem(at: url)   // a partial download; it may not exist
        }
        if let channel {
            channel.finish(throwing: error.map(NetworkProvider.normalize))
            return
        }
        // An upload that got its answer was sent whole, whether or not URLSession said so (a URL protocol
        // such as the mock's cannot report upload progress).
        if error == nil, progress != nil, file == nil, uploadSize > 0, sent < uploadSize {
            sent = uploadSize
            report(uploadSize, of: uploadSize)
        }
        onComplete(gathered, task.response, error, state)
    }

    /// `false` (and the task stopped as too large) when the response declares a body over the limit.
    private func checkDeclaredLength(of response: URLResponse) -> Bool {
        guard response.expectedContentLength > Int64(sizeLimit),
              let status = (response as? HTTPURLResponse)?.statusCode, status >= 200, status != 204, status != 304,
              NetworkProvider.declaresItsBody(request)   // looked at only now: header look-ups are not free
        else { return true }
        stopForSize()
        return false
    }

    private func stopForSize() {
        overLimit = true
        gathered = Data()
        handle.stopForSize()
    }

    private func report(_ completed: Int64, of expected: Int64) {
        progress?.report(TransferProgress(completedBytes: completed, totalBytes: expected > 0 ? expected : nil, attempt: attempt))
    }
}
