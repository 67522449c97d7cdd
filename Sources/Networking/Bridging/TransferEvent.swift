// Apple platforms only in the library; see DemandPublisher.swift.
#if canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(OpenCombine)
    import OpenCombine
#endif
#if NETWORKING_COMBINE_BRIDGE_PACKAGE
    import Networking
#endif

#if canImport(Combine) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(OpenCombine))
    import Foundation

    /// What a transfer publisher emits: progress while the body moves, then the response once.
    ///
    /// ``NetworkProviding/uploadPublisher(_:interceptor:)`` and the download publishers emit any number of
    /// `progress` values (the newest one when the subscriber asks: a slow subscriber skips values, it never
    /// gets a backlog), then one `completed`, then finish.
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
    public enum TransferEvent: Sendable {
        /// How far the transfer has come; see ``TransferProgress``.
        case progress(TransferProgress)
        /// The transfer ended with this response (a download's body is in its file, and `data` is empty).
        case completed(Response)

        /// The progress this event carries, or `nil` for `completed`.
        public var progress: TransferProgress? {
            if case .progress(let progress) = self { return progress }
            return nil
        }

        /// The response this event carries, or `nil` for `progress`.
        public var response: Response? {
            if case .completed(let response) = self { return response }
            return nil
        }
    }

    extension DemandSubscription where Output == TransferEvent {
        /// Runs a transfer that reports progress through a reporter, handing out progress values as the
        /// subscriber asks for them (the newest one, and at most one read ahead), then its response.
        /// Cancelling the subscription cancels the transfer (a child of the body's task) at once.
        func sendTransfer(_ transfer: @escaping @Sendable (ProgressReporter) async throws -> Response) async throws {
            let (updates, reporter) = TransferProgress.makeStream()   // keeps the newest value only
            async let response = transfer(reporter)
            try await send(contentsOf: updates.map { TransferEvent.progress($0) })   // finished when the transfer ended
            let completed = TransferEvent.completed(try await response)
            try await reserve()
            send(completed)
        }
    }
#endif
