import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process whose standard output is read line by line as it is written (a thread blocked on the pipe),
/// so that a driver can act on what it printed and, after killing it, still read every line it wrote before.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `lines`, `partial` and `ended` are touched only under `lock`; `process` is set up once in init.
    private let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial = Data()
    private var ended = false
    private let stderr = Pipe()

    /// Starts `executable` with `arguments`.
    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = stderr
        try process.run()
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData   // blocks; empty at the end of the pipe (every writer gone)
                lock.withLock {
                    if data.isEmpty {
                        if !partial.isEmpty { lines.append(String(decoding: partial, as: UTF8.self)) }
                        partial = Data()
                        ended = true
                    } else {
                        partial.append(data)
                        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                            lines.append(String(decoding: partial[partial.startIndex..<newline], as: UTF8.self))
                            partial = Data(partial[partial.index(after: newline)...])
                        }
                    }
                }
                if data.isEmpty { return }
            }
        }
    }

    /// The process id.
    var pid: Int32 { process.processIdentifier }

    /// Every complete line it printed so far, and whether its output ended.
    var output: (lines: [String], ended: Bool) { lock.withLock { (lines, ended) } }

    /// Sends SIGKILL.
    func kill() { sendKill(process.processIdentifier) }

    /// Waits (off the cooperative pool) until it exited and its output ended, at most `timeout` seconds; then kills
    /// it. Returns its exit status (or the signal that ended it) and whether it was a signal.
    func wait(timeout: TimeInterval) async -> (status: Int32, signalled: Bool, timedOut: Bool) {
        let process = process
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning || !output.ended {
            if Date() > deadline, !timedOut {
                timedOut = true
                kill()
            }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal, timedOut)
    }

    /// What it wrote to standard error (read once it ended).
    var standardError: String {
        String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
    }
}

/// SIGKILL to `pid` (outside the class, whose `kill()` would shadow the C function).
private func sendKill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}
