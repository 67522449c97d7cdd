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
        /// Gathered in memory: a plain request, or an upload with progress.
        case buffer
        /// Handed to a ``ResponseStream`` as it arrives.
        case stream
        /// Written to this file (a download); the file is removed if the attempt fails, unless its
        /// ``DownloadResumption`` keeps the bytes for the next attempt, which may append to them.
        case file(URL)
    }

    /// Called once, when the task completed (as a completion handler would be), unless its body went to a
    /// stream: the gathered body (empty when it went to a file), the response, the error, what the
    /// session delegate learned about the task (a challenge it cancelled), and whether the body went whole
    /// to the download's file (only then does the file exist).
    typealias Completion = @Sendable (Data, URLResponse?, (any Error)?, SessionDelegate.TaskState?, _ wroteFile: Bool) -> Void

    private let delivery: Delivery
    private let acceptable: Set<Int>
    /// Whether the provider follows redirects for this call: a redirect's body is then only gathered
    /// (bounded), never delivered to a download or a stream, whatever statuses the call accepts.
    private let followsRedirects: Bool
    /// The limit of an accepted body's delivery: a download's file, or how far a stream's reader may lag.
    private let deliveryLimit: Int
    /// The limit of a body gathered in memory: a plain request's, or any response whose status was not
    /// accepted (an error body for the error mapper).
    private let gatherLimit: Int
    /// The request sent, to tell (only when a declared length is over the limit) whether its response
    /// declares a body it sends.
    private let request: URLRequest
    private let progress: ProgressTracker?
    /// The size of the body sent, for progress (0 when unknown or nothing is reported).
    private let uploadSize: Int64
    private let handle: TaskHandle
    /// The task's slot under the provider's limits, given back when it completes (see ``CallSlots``).
    private let slot: CallSlot?
    /// A download's partial file across attempts: whether a response continues it, and what a failure keeps.
    private let resumption: DownloadResumption?
    /// Called when an accepted response to a ``Delivery/stream`` arrives, with the channel its body will
    /// flow through; the attempt's caller gets the stream from here, before the body has arrived.
    private let onStream: (@Sendable (HTTPURLResponse, BodyChannel) -> Void)?
    private let onComplete: Completion

    private var gathered = Data()
    private var received: Int64 = 0
    private var channel: BodyChannel?
    private var file: FileHandle?
    /// Bytes received for the file, written a megabyte at a time rather than one write per 16 KB chunk.
    private var unwritten = Data()
    private static let writeSize = 1 << 20
    private var fileError: (any Error)?
    /// Why the response was refused: not the rest of the partial file the request asked for (a 416, or a 206
    /// that does not fit), or framed by an invalid `Content-Length` (``ResponseFraming``): the attempt ends with it.
    private var refusal: NetworkError?
    /// The most upload progress reported so far.
    private var sent: Int64 = 0
    /// The limit the body went over, if it did; the task may still complete normally (its last callbacks
    /// were already queued), and later bytes are dropped.
    private var exceededLimit: Int?
    /// The download's total when known: the declared length of a body that is not content-encoded (with
    /// gzip the declared length is the compressed one, and the bytes counted are decoded).
    private var downloadTotal: Int64 = -1
    /// The response whose body is arriving, once its head arrived: on Linux, a failure of a body that is not
    /// content-encoded is then a connection that broke off mid-body (see ``didComplete(_:error:state:)``).
    private var arrived: HTTPURLResponse?

    init(
        delivery: Delivery, acceptable: Set<Int>, followsRedirects: Bool, deliveryLimit: Int, gatherLimit: Int, request: URLRequest,
        progress: ProgressTracker?, uploadSize: Int64, handle: TaskHandle, slot: CallSlot? = nil, resumption: DownloadResumption? = nil,
        onStream: (@Sendable (HTTPURLResponse, BodyChannel) -> Void)?, onComplete: @escaping Completion
    ) {
        self.delivery = delivery
        self.acceptable = acceptable
        self.followsRedirects = followsRedirects
        self.deliveryLimit = deliveryLimit
        self.gatherLimit = gatherLimit
        self.request = request
        self.progress = progress
        self.uploadSize = uploadSize
        self.handle = handle
        self.slot = slot
        self.resumption = resumption
        self.onStream = onStream
        self.onComplete = onComplete
        progress?.startTransfer()
    }

    /// The response arrived (called once per response; a second one, as Apple sends for
    /// `multipart/x-mixed-replace`, only goes on gathering).
    func didReceive(_ response: URLResponse, task: URLSessionDataTask) -> URLSession.ResponseDisposition {
        let http = response as? HTTPURLResponse
        arrived = http
        guard channel == nil, file == nil, exceededLimit == nil else { return .allow }
        if let http, ResponseFraming.hasInvalidContentLength(http, to: request) {
            refusal = .transportFailed(URLError(.cannotParseResponse))   // RFC 9112 §6.3 (5): discard it
            handle.cancelTask()   // a `.cancel` disposition is ignored on Linux
            return .cancel
        }
        if let resumption, let http, let refusal = resumption.refusal(of: http) {
            self.refusal = refusal
            handle.cancelTask()   // a `.cancel` disposition is ignored on Linux
            return .cancel
        }
        guard let http, acceptable.contains(http.statusCode),
            !(followsRedirects && RedirectPolicy.isRedirect(http))
        else {
            return checkDeclaredLength(of: response, limit: gatherLimit) ? .allow : .cancel
        }
        switch delivery {
        case .buffer:
            return checkDeclaredLength(of: response, limit: gatherLimit) ? .allow : .cancel
        case .stream:
            let channel = BodyChannel(limit: deliveryLimit)
            channel.attach(task)
            self.channel = channel
            onStream?(http, channel)
        case .file(let url):
            // A resumed download's 206 appends to the partial file; the size limit counts the whole file.
            var offset: Int64 = 0
            if case .append(let kept)? = resumption?.start(with: http) { offset = kept }
            guard checkDeclaredLength(of: response, limit: deliveryLimit, after: offset) else { return .cancel }
            do {
                if offset == 0 {
                    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                    }
                }
                let file = try FileHandle(forWritingTo: url)
                self.file = file
                if offset > 0 {
                    try file.truncate(atOffset: UInt64(offset))   // a longer file keeps only the bytes it was resumed from
                    try file.seekToEnd()
                }
            } catch {
                fileError = error
                handle.cancelTask()   // a `.cancel` disposition is ignored on Linux: cancel the task itself
                return .cancel
            }
            received = offset
            let declared = Self.isUnencoded(http) ? response.expectedContentLength : -1
            downloadTotal = declared >= 0 ? offset + declared : -1
            progress?.report(offset, of: downloadTotal)   // a resumed download continues from what it kept
        }
        return .allow
    }

    func didReceive(_ data: Data, task: URLSessionDataTask) {
        guard exceededLimit == nil, fileError == nil else { return }
        received += Int64(data.count)
        if let channel {
            if !channel.send(data) { stopForSize(limit: deliveryLimit) }
            return
        }
        if let file {
            guard received <= Int64(deliveryLimit) else { return stopForSize(limit: deliveryLimit) }
            unwritten.append(data)
            if unwritten.count >= Self.writeSize {
                do {
                    try file.write(contentsOf: unwritten)
                    unwritten.removeAll(keepingCapacity: true)
                } catch {
                    fileError = error
                    handle.cancelTask()
                    return
                }
            }
            progress?.report(received, of: downloadTotal)
        } else {
            guard received <= Int64(gatherLimit) else { return stopForSize(limit: gatherLimit) }
            gathered.append(data)
        }
    }

    /// Upload progress (not reported for a download, whose progress is the body received).
    func didSend(_ totalSent: Int64, of expected: Int64) {
        guard case .buffer = delivery else { return }
        // A body streamed on Linux (see FileBodyTask) has no length URLSession knows: the file's is ours; and a
        // resend on a new connection (see FileBodyStream) counts from zero again: progress never goes past it.
        sent = uploadSize > 0 ? min(max(sent, totalSent), uploadSize) : max(sent, totalSent)
        progress?.report(sent, of: expected > 0 || uploadSize <= 0 ? expected : uploadSize)
    }

    func didComplete(_ task: URLSessionTask, error: (any Error)?, state: SessionDelegate.TaskState) {
        slot?.release()   // the exchange ended, however: the next call may go
        var error = error
        #if canImport(FoundationNetworking)
            // Linux's URLSession reports a connection closed mid-body as `URLError.unknown` (-1); every call (a
            // plain one, a stream, a download) reports it as Apple platforms do, `networkConnectionLost`, so that a
            // `RetryPolicy` retries (and a download resumes) it. A body that is not content-encoded can fail only
            // so once its response arrived; an encoded one keeps -1, which may be a body that can never be decoded.
            // So is a streamed file body that refused to be sent again, empty, on a new connection after the one it
            // went out on died (see FileBodyStream): the connection was lost, and the whole request may be retried.
            if let urlError = error as? URLError, urlError.code == .unknown,
                file != nil || Self.isUnencoded(arrived)
                    || (task.originalRequest?.httpBodyStream as? FileBodyStream)?.refusedToResend == true
            {
                error = URLError(.networkConnectionLost, userInfo: urlError.userInfo)
            }
        #endif
        // The bytes that arrived before a drop are kept when the download can resume from them.
        let keepsBytes = error == nil || resumption != nil
        if let file {
            do {
                if keepsBytes, fileError == nil, exceededLimit == nil, !unwritten.isEmpty { try file.write(contentsOf: unwritten) }
                try file.close()
            } catch {
                fileError = fileError ?? error
            }
            unwritten = Data()
        }
        if let fileError { error = NetworkError.fileWriteFailed(fileError) }
        if let exceededLimit { error = NetworkError.responseTooLarge(limit: exceededLimit) }
        if let refusal { error = refusal }
        // A resumed 206 that ended before its range's end or the file's: kept, and the rest asked for next.
        if error == nil, file != nil, let shortfall = resumption?.shortfall(written: received) { error = shortfall }
        if error != nil, file != nil, case .file(let url) = delivery {
            let kept = fileError == nil && exceededLimit == nil && resumption?.keep(written: received) == true
            if !kept {
                resumption?.reset()
                try? FileManager.default.removeItem(at: url)   // a partial download; removing it is all there is to do
            }
        }
        if let channel {
            channel.finish(throwing: error.map(NetworkProvider.normalize))
            return
        }
        // An upload that got its answer (not a redirect, which is followed or refused) was sent whole,
        // whether or not URLSession said so: a URL protocol such as the mock's cannot report upload progress.
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? 0
        if error == nil, case .buffer = delivery, uploadSize > 0, sent < uploadSize, !(300..<400).contains(status) {
            sent = uploadSize
            progress?.report(uploadSize, of: uploadSize)
        }
        onComplete(gathered, task.response, error, state, error == nil && file != nil)
    }

    /// `false` (and the task stopped as too large) when the response declares a body over `limit`, counting
    /// the `offset` bytes a resumed download already has.
    private func checkDeclaredLength(of response: URLResponse, limit: Int, after offset: Int64 = 0) -> Bool {
        guard response.expectedContentLength > Int64(limit) - offset,
            let status = (response as? HTTPURLResponse)?.statusCode, status >= 200, status != 204, status != 304,
            NetworkProvider.declaresItsBody(request)   // looked at only now: header look-ups are not free
        else { return true }
        stopForSize(limit: limit)
        return false
    }

    /// Whether `response` arrived and its body is not content-encoded (no `Content-Encoding`, or `identity`).
    private static func isUnencoded(_ response: HTTPURLResponse?) -> Bool {
        guard let response else { return false }
        let coding = response.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces) ?? ""
        return coding.isEmpty || coding.lowercased() == "identity"
    }

    private func stopForSize(limit: Int) {
        exceededLimit = limit
        gathered = Data()
        handle.cancelTask()
    }
}
