import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file's bytes as a stream body, read once from its first byte to its end.
///
/// On Linux, libcurl sends a request again on a new connection when a reused one dies while or after the
/// body goes out, before any answer. FoundationNetworking then asks the session's delegate for a new stream
/// (``SessionDelegate`` gives a new one on the same file); it never rewinds the old one, whose rest would go
/// out framed as a complete chunked body (measured: a plain `InputStream` arrived empty, or without its first
/// megabytes, and was answered 200). As a backstop, this stream refuses to be read after it has told its end
/// (``refusedToResend``): such an attempt fails as a lost connection instead of sending an empty body.
final class FileBodyStream: InputStream {
    /// The file's path.
    let path: String
    private let lock = NSLock()
    private var descriptor: Int32 = -1
    private var status: Stream.Status = .notOpen
    private var error: (any Error)?
    private var toldItsEnd = false
    private var refused = false

    /// A stream of the file at `path`, opened when the transfer opens it.
    init(path: String) {
        self.path = path
        super.init(data: Data())
    }

    /// Whether a read came after the end was told (libcurl sending the request again), and was refused.
    var refusedToResend: Bool {
        lock.lock()
        defer { lock.unlock() }
        return refused
    }

    override func open() {
        lock.lock()
        defer { lock.unlock() }
        guard status == .notOpen else { return }
        descriptor = openForReading(path)
        if descriptor < 0 {
            fail(POSIXErrorCode(rawValue: errno) ?? .EIO)
        } else {
            status = .open
        }
    }

    override func close() {
        lock.lock()
        defer { lock.unlock() }
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
        if status != .error { status = .closed }
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard status == .open || status == .atEnd else { return -1 }
        if toldItsEnd {
            refused = true
            fail(.ECONNRESET)   // the connection the body was sent on died; this is its resend
            return -1
        }
        while true {
            let count = readDescriptor(descriptor, buffer, length)
            if count < 0, errno == EINTR { continue }
            if count < 0 {
                fail(POSIXErrorCode(rawValue: errno) ?? .EIO)
                return -1
            }
            if count == 0 {   // the end: the file is closed now, not when the task lets the stream go
                toldItsEnd = true
                status = .atEnd
                closeDescriptor(descriptor)
                descriptor = -1
            }
            return count
        }
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>) -> Bool {
        false
    }

    /// `true` while open, and once more after the end was told, so that the read that follows is refused
    /// rather than taken for the end of an empty body.
    override var hasBytesAvailable: Bool {
        lock.lock()
        defer { lock.unlock() }
        return status == .open || status == .atEnd
    }

    override var streamStatus: Stream.Status {
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    override var streamError: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }

    deinit {
        if descriptor >= 0 { closeDescriptor(descriptor) }
    }

    private func fail(_ code: POSIXErrorCode) {
        error = POSIXError(code)
        status = .error
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
    }
}

// The system calls, at file scope: inside the stream, `open`, `read` and `close` name its own methods.
private func openForReading(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }
private func readDescriptor(_ descriptor: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int { read(descriptor, buffer, length) }
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
