import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension BackgroundTransferService {
    /// Handles one item of the session's events, in order.
    func handle(_ item: BackgroundEventInlet.Item) async {
        switch item {
        case .reconcile(let known, let recordIDs):
            let missing = recordIDs.filter { records[$0].map { !known.contains($0.label) } ?? false }
            if inlet.hasCompletionHandler {
                suspectedLost.formUnion(missing)   // events on their way may be theirs: wait for them
            } else {
                await reportLost(missing)
            }
        case .event(let event):
            await handle(event)
        }
    }

    private func handle(_ event: BackgroundSessionEvent) async {
        switch event {
        case .progress(let label, let completed, let total):
            guard let record = record(labelled: label) else { return }
            if record.kind == .download, let limit = record.maximumSize, completed > limit || (total ?? 0) > limit {
                inlet.noteFailure(.responseTooLarge(limit: Int(clamping: limit)), for: label)   // stop now rather than fill the disk
                session.cancelTask(labelled: label)
            }
            let progress = TransferProgress(completedBytes: completed, totalBytes: total)
            latestProgress[record.id] = progress
            for continuation in progressContinuations[record.id] ?? [] { continuation.yield(progress) }
        case .receivedData(let label, let data):
            guard let record = record(labelled: label) else { return }
            var body = responseBodies[record.id] ?? Data()
            body.append(data.prefix(max(0, Self.maximumUploadResponseSize - body.count)))
            responseBodies[record.id] = body
        case .finishedDownloading(let label, let file):
            guard let record = record(labelled: label) else {
                try? FileManager.default.removeItem(at: file)   // a task with no readable record: nobody takes its body
                return
            }
            stagedFiles[record.id] = file
        case .completed(let label, let response, let error):
            let failure = inlet.untrack(label)
            guard let record = record(labelled: label) else { return }
            let outcome = await outcome(of: record, response: response, error: error, failure: failure)
            await end(record, with: outcome)
        case .finishedEvents:
            let missing = suspectedLost
            suspectedLost = []
            await reportLost(missing)
            inlet.eventsDidFinish()   // every event before it was handled, its outcome handed out
        }
    }

    /// The record of a running transfer labelled `label`, or of one reported lost at this launch (its
    /// completion came late: the real outcome is told after all).
    private func record(labelled label: String) -> BackgroundTransferRecord? {
        UUID(uuidString: label).flatMap { records[$0] ?? reportedLost[$0] }
    }

    /// Ends the records `ids` whose tasks the system no longer knows as ``BackgroundTransferError/lost``.
    private func reportLost(_ ids: Set<UUID>) async {
        for id in ids.sorted(by: { $0.uuidString < $1.uuidString }) {
            guard let record = records[id] else { continue }   // its completion came meanwhile
            reportedLost[id] = record
            await end(record, with: .failed(record, .lost))   // never dropped silently
        }
    }

    /// Keeps `outcome` in `record` on disk, hands it out, and forgets the transfer's files and progress;
    /// the record goes when the app acknowledges the outcome. After ``stop()`` nothing changes: the record
    /// stays as it was, and the next launch tells its outcome (``BackgroundTransferError/lost``, its task gone).
    private func end(_ record: BackgroundTransferRecord, with outcome: BackgroundTransferOutcome) async {
        records[record.id] = nil
        guard isRunning else { return }   // nobody to hand it to, and the folder may be another service's now
        if case .failed(_, .lost) = outcome {} else { reportedLost[record.id] = nil }
        responseBodies[record.id] = nil
        latestProgress[record.id] = nil
        cancelledByApp.remove(record.id)
        if let staged = stagedFiles.removeValue(forKey: record.id) { try? FileManager.default.removeItem(at: staged) }   // not landed
        if let owned = record.ownedBodyFile { try? FileManager.default.removeItem(at: owned) }   // the body we wrote
        for continuation in progressContinuations.removeValue(forKey: record.id) ?? [] { continuation.finish() }
        // Kept before it is handed out: a crash after this tells it again at the next launch. A record that
        // cannot be written keeps its running state, and the next launch reports it lost: never dropped.
        try? store.save(record, settlement: BackgroundTransferSettlement(outcome))
        unacknowledged[record.id] = record
        outcomeContinuation.yield(outcome)
    }

    /// What the completion of `record`'s task means.
    private func outcome(
        of record: BackgroundTransferRecord, response: BackgroundSessionResponse?, error: URLError?, failure: NetworkError?
    ) async -> BackgroundTransferOutcome {
        if let failure { return .failed(record, .network(failure)) }
        if let error, error.code == .cancelled {
            // Cancelled only when the task was: a completion already queued when the app cancelled keeps its
            // response. One the app did not ask for at this launch is the system's (iOS cancels the tasks of
            // a force-quit app, NSURLErrorBackgroundTaskCancelledReasonKey): the transfer is lost.
            return .failed(record, cancelledByApp.contains(record.id) ? .cancelled : .lost)
        }
        if let error { return .failed(record, .network(.transportFailed(error))) }
        guard let response else { return .failed(record, .network(.transportFailed(URLError(.badServerResponse)))) }
        if let final = response.url, Origin(final) != Origin(record.url) {
            return .failed(record, .redirectedToAnotherOrigin(Origin(final)))   // the system followed it: RFC 9110 §15.4
        }
        let status = response.statusCode
        if record.tokenFingerprint != nil, record.expiredStatusCodes.contains(status) {
            return .failed(record, .unauthorized(statusCode: status, credentialRefreshedSince: await credentialRefreshed(since: record)))
        }
        guard record.acceptableStatusCodes.contains(status) else { return .failed(record, .network(.invalidStatusCode(status))) }
        guard record.kind == .download, let destination = record.destination else {
            let body = responseBodies[record.id] ?? Data()
            return .finished(record, BackgroundTransferResponse(statusCode: status, headers: response.headers, body: body))
        }
        guard let staged = stagedFiles.removeValue(forKey: record.id) else {
            return .failed(record, .network(.fileWriteFailed(CocoaError(.fileNoSuchFile))))
        }
        do {
            try await BackgroundDownloadLanding.land(staged, at: destination, record: record, response: response)
        } catch let error as BackgroundTransferError {
            return .failed(record, error)
        } catch {
            return .failed(record, .network(.fileWriteFailed(error)))
        }
        return .finished(record, BackgroundTransferResponse(statusCode: status, headers: response.headers, file: destination))
    }

    /// Whether the signed-in credential is of `record`'s account and holds another token than the one
    /// its task was sent with.
    private func credentialRefreshed(since record: BackgroundTransferRecord) async -> Bool {
        // A store that cannot be read is "not refreshed": the app refreshes, then enqueues again.
        guard let authenticator, let credential = (try? await authenticator.currentCredential()) ?? nil else { return false }
        return credential.account == record.account && SHA256.hex(credential.accessToken) != record.tokenFingerprint
    }
}
