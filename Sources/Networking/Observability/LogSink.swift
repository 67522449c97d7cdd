import Foundation

#if canImport(os)
    import os
#endif

/// Where a ``NetworkLogger`` writes its lines.
///
/// ```swift
/// NetworkLogger(sink: .standardOutput)
/// NetworkLogger(sink: LogSink { line in myLogger.info(line) })
/// ```
public struct LogSink: Sendable {
    /// Writes one line.
    public let write: @Sendable (String) -> Void

    /// A sink that calls `write` with each line.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    /// Standard output, one `print` a line.
    public static let standardOutput = LogSink { print($0) }

    #if canImport(os)
        /// Apple's unified logging, at the `info` level and public (the lines are already redacted).
        /// Apple platforms only; not compiled by this repository's Linux CI.
        public static func osLog(subsystem: String, category: String = "Networking") -> LogSink {
            let logger = Logger(subsystem: subsystem, category: category)
            return LogSink { line in logger.info("\(line, privacy: .public)") }
        }
    #endif
}
