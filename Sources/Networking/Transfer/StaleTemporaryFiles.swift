import Foundation

/// Removes the temporary files a crashed (or killed) process left behind: a download's
/// `.networking-*.download` beside its destination, and a spooled form's `networking-*.multipart` in the
/// temporary directory. Only files older than a day go: a younger one may be another process's, in use.
/// A download's partial file kept for resuming (see ``ResumableDownload``) has the same name, so one left
/// alone for a day goes too; a call that continues it touches it first.
enum StaleTemporaryFiles {
    /// How old a leftover file must be, in seconds, to be removed: a day.
    static let minimumAge: TimeInterval = 86_400

    private static let lock = NSLock()
    // Guarded by `lock`: the folders swept for downloads, and whether the multipart sweep started.
    nonisolated(unsafe) private static var sweptFolders: Set<String> = []
    nonisolated(unsafe) private static var sweptMultipart = false

    /// Whether `name` is a download's temporary file.
    static func isDownload(_ name: String) -> Bool { name.hasPrefix(".networking-") && name.hasSuffix(".download") }

    /// Whether `name` is a spooled form's temporary file.
    static func isMultipart(_ name: String) -> Bool { name.hasPrefix("networking-") && name.hasSuffix(".multipart") }

    /// Removes stale download files from `folder`, the first time a download there asks in this process
    /// (one directory listing, off the cooperative pool); later calls for the same folder return at once.
    static func sweepDownloads(in folder: URL) async {
        guard firstSweep(of: folder.standardizedFileURL.path) else { return }
        _ = try? await BlockingFileWork.run { _ in removeStale(in: folder, where: isDownload) }   // never throws
    }

    /// Whether `path` was not swept yet in this process (and is from now on).
    private static func firstSweep(of path: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return sweptFolders.insert(path).inserted
    }

    /// Starts, once per process and in the background, removing stale form files from the temporary
    /// directory; returns at once.
    static func sweepMultipartOnce() {
        lock.lock()
        let first = !sweptMultipart
        sweptMultipart = true
        lock.unlock()
        guard first else { return }
        DispatchQueue.global(qos: .utility).async {
            removeStale(in: FileManager.default.temporaryDirectory, where: isMultipart)
        }
    }

    /// Removes the regular files in `folder` whose name `matches` and that were last modified more than
    /// ``minimumAge`` before `now`; returns the names removed. A file that cannot be listed or removed is
    /// left (someone else's, or already gone): this is housekeeping, with nobody to report to.
    @discardableResult
    static func removeStale(in folder: URL, where matches: (String) -> Bool, now: Date = Date()) -> [String] {
        let keys: [URLResourceKey] = [.isRegularFileKey, .contentModificationDateKey]
        guard let entries = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: keys, options: []) else { return [] }
        var removed: [String] = []
        for entry in entries where matches(entry.lastPathComponent) {
            guard let values = try? entry.resourceValues(forKeys: Set(keys)), values.isRegularFile == true,
                let modified = values.contentModificationDate, now.timeIntervalSince(modified) > minimumAge
            else { continue }
            if (try? FileManager.default.removeItem(at: entry)) != nil { removed.append(entry.lastPathComponent) }
        }
        return removed
    }
}
