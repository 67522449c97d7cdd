import Foundation

/// One owner per cache folder: in a process, every ``DiskResponseCache`` on a folder shares its
/// ``DiskCacheFolder``; across processes, the folder's owner holds an exclusive `flock` on its `.lock` file.
enum DiskCacheFolderOwnership {
    /// The name of the lock file in the cache's folder.
    static let lockFileName = ".lock"

    private static let registry = Registry()

    /// `directory`'s path with its symbolic links resolved, as far as it exists (the rest as given): one
    /// folder has one path, however it is reached (`/var/…` and `/private/var/…` on Apple platforms), so
    /// that the caches on it share one state rather than fight over its lock file. No file is created.
    static func resolvedPath(of directory: URL) -> String {
        let standardized = directory.standardizedFileURL.path
        var existing = standardized
        var missing: [String] = []   // the trailing components that do not exist (yet), last first
        while true {
            if let resolved = realpath(existing, nil) {
                defer { free(resolved) }
                let base = String(cString: resolved)
                return missing.reversed().reduce(base) { $0.hasSuffix("/") ? $0 + $1 : $0 + "/" + $1 }
            }
            let parent = (existing as NSString).deletingLastPathComponent
            guard errno == ENOENT, !parent.isEmpty, parent != existing else { return standardized }
            missing.append((existing as NSString).lastPathComponent)
            existing = parent
        }
    }

    /// The state of the folder at `path` (a path with its symbolic links resolved) in this process: the one every cache on it
    /// uses while any of them lives, else a new one.
    static func folder(atPath path: String) -> DiskCacheFolder {
        registry.folder(atPath: path)
    }

    /// Forgets the folder at `path` once its state is gone (called as it goes).
    static func forget(_ path: String) {
        registry.forget(path)
    }

    /// Takes the folder `root`'s lock file, creating it, and returns its descriptor (to keep open while the
    /// folder is used), or `nil` when another process holds it or it cannot be opened. A file system that
    /// has no `flock` gives the folder to the caller.
    static func lock(folder root: String) -> Int32? {
        let descriptor = open("\(root)/\(lockFileName)", O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK {
                close(descriptor)
                return nil
            }
            break   // e.g. ENOLCK, EOPNOTSUPP: no lock to take
        }
        return descriptor
    }

    /// The folders in use, held weakly: a folder's state goes when its last cache and its last call do.
    private final class Registry: @unchecked Sendable {
        // @unchecked: `folders` is guarded by `lock`.
        private struct Weak {
            weak var folder: DiskCacheFolder?
        }

        private let lock = NSLock()
        private var folders: [String: Weak] = [:]

        func folder(atPath path: String) -> DiskCacheFolder {
            lock.lock()
            defer { lock.unlock() }
            if let folder = folders[path]?.folder { return folder }
            let folder = DiskCacheFolder(root: path)
            folders[path] = Weak(folder: folder)
            return folder
        }

        func forget(_ path: String) {
            lock.lock()
            let current = folders[path]?.folder
            if current == nil { folders[path] = nil }
            lock.unlock()
            // A folder's last reference may go here, not under the lock: its deinit calls `forget`.
            withExtendedLifetime(current) {}
        }
    }
}
