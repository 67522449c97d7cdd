import Foundation

/// Why a durable write, read or lock failed: the folder is held by another owner, or a file-system call
/// failed (its name, the path and `errno`). Paths are the app's own folders, never a secret.
package enum DurabilityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another owner (an open ``DurableFolderLock`` in this process or another) holds the folder at `path`.
    case folderInUse(path: String)
    /// The file-system call `operation` failed on `path` with `errno`.
    case fileSystem(operation: String, path: String, errno: Int32)

    /// The error of the file-system call `operation` on `path` that just failed (reads `errno`).
    static func failed(_ operation: String, _ path: String, errno code: Int32 = errno) -> DurabilityError {
        .fileSystem(operation: operation, path: path, errno: code)
    }

    /// A one-line description for logs and reports.
    package var description: String {
        switch self {
        case .folderInUse(let path):
            return "the folder \(path) is in use by another owner"
        case .fileSystem(let operation, let path, let code):
            return "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
