import Foundation

/// Validates a background download's body and moves it into place.
enum BackgroundDownloadLanding {
    /// Checks `staged` (size limit, expected validator), then moves it beside `destination`, flushes it
    /// and renames it over `destination`: an atomic replace, so `destination` holds the old file or the
    /// whole new one. `staged` is gone afterwards, whatever happened.
    ///
    /// - Throws: ``BackgroundTransferError``: `.network(.responseTooLarge)`, `.validatorMismatch`, or
    ///   `.network(.fileWriteFailed)`.
    static func land(_ staged: URL, at destination: URL, record: BackgroundTransferRecord, response: BackgroundSessionResponse) async throws {
        let temporary = destination.deletingLastPathComponent().appendingPathComponent(".networking-\(record.id.uuidString).download")
        try await BlockingFileWork.run { _ in   // a copy across volumes and an fsync may wait: not on the cooperative pool
            defer {
                try? FileManager.default.removeItem(at: staged)   // landed (moved away) or refused
                try? FileManager.default.removeItem(at: temporary)   // refused, or moved into place
            }
            if let limit = record.maximumSize, let size = RequestBody.sizeOfReadableRegularFile(staged), size > limit {
                throw BackgroundTransferError.network(.responseTooLarge(limit: Int(clamping: limit)))
            }
            if let expected = record.expectedValidator {
                let received = response.header("ETag")
                guard let received, !received.hasPrefix("W/"), received == expected else {
                    throw BackgroundTransferError.validatorMismatch(expected: expected, received: received)
                }
            }
            do {
                try? FileManager.default.removeItem(at: temporary)
                try FileManager.default.moveItem(at: staged, to: temporary)
                let handle = try FileHandle(forWritingTo: temporary)
                defer { try? handle.close() }   // nothing written through it: closing loses nothing
                try handle.synchronize()
            } catch {
                throw BackgroundTransferError.network(.fileWriteFailed(error))
            }
            // rename(2) replaces the destination atomically (the file is in the same folder).
            guard rename(temporary.path, destination.path) == 0 else {
                throw BackgroundTransferError.network(.fileWriteFailed(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)))
            }
        }
    }
}
