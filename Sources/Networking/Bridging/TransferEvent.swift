// Apple platforms only in the library; see DemandPublisher.swift.
#if !NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine)
    import Networking
    import OpenCombine
#endif

#if (!NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine))
    import Foundation

    /// What a transfer publisher emits: progress while the body moves, then its outcome once — the
    /// `Response` (`TransferEvent<Response>`), or for a decoded upload the value decoded from it.
    ///
    /// ``NetworkProviding/uploadPublisher(_:interceptor:)``, ``NetworkProviding/uploadPublisher(_:as:interceptor:)``
    /// and the download publishers emit any number of `progress` values (a slow subscriber skips values, it
    /// never gets a backlog; the value it gets may be one step behind the transfer, read while it had not
    /// asked yet), then one `completed`, then finish. A `NetworkProviding` of your own that implements the
    /// transfer itself reports no progress: its publisher emits `completed` only.
    ///
    /// ```swift
    /// provider.downloadPublisher(ReportAPI.latest, to: destination)
    ///     .sink(receiveCompletion: { _ in }, receiveValue: { event in
    ///         switch event {
    ///         case .progress(let progress): print(progress.fraction ?? 0)
    ///         case .completed(let response): print(response.statusCode)
    ///         }
    ///     })
    /// ```
    public enum TransferEvent<Outcome: Sendable>: Sendable {
        /// How far the transfer has come; see ``TransferProgress``.
        case progress(TransferProgress)
        /// The transfer ended with this outcome: the response (a download's body is in its file, and `data`
        /// is empty), or the value a decoded upload decoded.
        case completed(Outcome)

        /// The progress this event carries, or `nil` for `completed`.
        public var progress: TransferProgress? {
            if case .progress(let progress) = self { return progress }
            return nil
        }

        /// The outcome this event carries, or `nil` for `progress`.
        public var outcome: Outcome? {
            if case .completed(let outcome) = self { return outcome }
            return nil
        }
    }

    extension TransferEvent where Outcome == Response {
        /// The response this event carries, or `nil` for `progress`.
        public var response: Response? { outcome }
    }

    extension DemandSubscription {
        /// Runs a transfer that reports progress through a reporter, handing out progress values as the
        /// subscriber asks for them, then its response. Cancelling the subscription cancels the transfer
        /// (a child of the body's task) at once.
        ///
        /// Progress is read until the transfer returns, not until its stream ends (a `NetworkProviding` of
        /// the app's own cannot end it). Then a progress value read and not yet asked for is dropped: the
        /// response waits for the next demand, and a failure is sent at once, without demand. When the
        /// subscription was cancelled first, the ``ResumableDownload`` of a ``DownloadInterrupted`` goes to
        /// `onCancel` instead: exactly one of them gets it.
        func sendTransfer<Outcome: Sendable>(
            onCancel: (@Sendable (ResumableDownload) -> Void)? = nil,
            _ transfer: @escaping @Sendable (ProgressReporter) async throws -> Outcome
        ) async throws where Output == TransferEvent<Outcome> {
            let (updates, reporter) = TransferProgress.makeStream()   // keeps the newest value only
            let outcome = await withTaskGroup(of: Result<Outcome, any Error>?.self) { group in
                group.addTask {
                    do {
                        return .success(try await transfer(reporter))
                    } catch {
                        return .failure(error)
                    }
                }
                group.addTask {
                    await self.sendProgress(updates, until: Outcome.self)
                    return nil
                }
                var outcome: Result<Outcome, any Error>?
                while let finished = await group.next() {
                    guard let finished else { continue }   // the progress ended first
                    outcome = finished
                    group.cancelAll()   // stops the progress
                }
                return outcome
            }
            switch outcome {
            case .success(let value):
                try await reserve()
                send(.completed(value))
            case .failure(let error):
                if !fail(error), let interrupted = error as? DownloadInterrupted {
                    onCancel?(interrupted.resumable)
                }
            case nil:
                throw CancellationError()   // unreachable: the transfer's task always returns a result
            }
        }

        /// Sends the values of `updates` as the subscriber asks for them, until the stream ends or this task
        /// is cancelled (the transfer returned): then a value waiting for demand is dropped.
        private func sendProgress<Outcome: Sendable>(_ updates: AsyncStream<TransferProgress>, until _: Outcome.Type) async
        where Output == TransferEvent<Outcome> {
            for await progress in updates {
                do {
                    try await reserve()
                } catch {
                    return
                }
                send(.progress(progress))
            }
        }
    }
#endif
