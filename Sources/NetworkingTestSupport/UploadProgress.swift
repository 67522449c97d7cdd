import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession's upload progress for a request ``MockURLProtocol`` answers.
///
/// A `URLProtocol`'s client has no call for bytes sent: URLSession reports upload progress only for its
/// own protocols, which tell the session's delegate, on the session's delegate queue, each time a part of
/// the body is written. The mock reads the body in chunks and does the same: it calls the delegate of the
/// task's session with `urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)`,
/// as swift-corelibs-foundation's HTTP protocol does, from the task's work queue, so each report comes
/// before the response that follows it.
///
/// On Apple platforms the task's session is out of the mock's reach: nothing is reported there, and a
/// `NetworkProvider` reports the whole body as sent when the response arrives.
enum UploadProgress {
    /// How much of a body is read at a time when the response does not throttle it.
    static let defaultChunkSize = 65_536

    /// Tells `session`'s delegate that `task` sent `bytes` more bytes, `totalSent` of `total` in all.
    static func report(_ bytes: Int64, totalSent: Int64, of total: Int64, task: URLSessionTask?, session: URLSession) {
        #if canImport(FoundationNetworking)
            guard let task, let delegate = session.delegate as? URLSessionTaskDelegate else { return }
            session.delegateQueue.addOperation {
                delegate.urlSession(session, task: task, didSendBodyData: bytes, totalBytesSent: totalSent, totalBytesExpectedToSend: total)
            }
        #endif
    }
}
