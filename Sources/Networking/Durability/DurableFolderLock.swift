import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive hold on a folder, across threads and processes: an `flock(2)` on a lock file in the folder,
/// taken without waiting. A second opener — in this process (each lock opens its own file description,
/// and `flock` locks conflict between descriptions) or in another — gets ``DurabilityError/folderInUse(path:)``.
///
/// The operating system releases the lock when its descriptor is closed: by ``release()``, when the lock
/// is deinitialised, or when the process dies in any way (`SIGKILL` included), so a crashed owner never
/// leaves its folder locked. The descriptor is not inherited by child processes (`O_CLOEXEC`).
///
/// A file system without `flock` (some network mounts answer `ENOLCK`/`EOPNOTSUPP`) gives the folder to
/// the caller, as the response cache's folder lock does: the lock cannot be more than the system offers.
package final class DurableFolderLock: @unchecked Sendable {
    // @unchecked: `descriptor` is guarded by `guardLock`.
    /// The name of the lock file in the folder.
    package static let fileName = ".lock"

    /// The path of the locked folder.
    package let folder: String
    private let guardLock = NSLock()
    private var descriptor: Int32

    /// Takes the lock on `folder` (created when missing), or throws ``DurabilityError/folderInUse(path:)``
    /// when another owner holds it, or another ``DurabilityError`` when the lock file cannot be opened.
    package init(folder: String) throws(DurabilityError) {
        try DurableFile.makeFolder(folder)
        let path = "\(folder)/\(Self.fileName)"
        let descriptor = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .failed("open", path) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK {
                close(descriptor)
                throw .folderInUse(path: folder)
            }
            break   // ENOLCK, EOPNOTSUPP: no lock to take on this file system
        }
        self.folder = folder
        self.descriptor = descriptor
    }

    /// Whether the lock is still held (not yet released).
    package var isHeld: Bool {
        guardLock.lock()
        defer { guardLock.unlock() }
        return descriptor >= 0
    }

    /// Releases the lock (idempotent): the next opener gets the folder.
    package func release() {
        guardLock.lock()
        let held = descriptor
        descriptor = -1
        guardLock.unlock()
        if held >= 0 { close(held) }
    }

    deinit {
        release()
    }
}
