// Apple platforms only in the library; see DemandPublisher.swift.
#if !NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine)
    import Networking
    import OpenCombine
#endif

#if (!NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine))
    import Foundation

    extension NetworkProviding {
        /// A publisher that uploads `endpoint`'s body when subscribed (see
        /// ``upload(_:interceptor:progress:)``): it emits ``TransferEvent/progress(_:)`` values while the body
        /// is sent, then ``TransferEvent/completed(_:)`` with the response, then finishes.
        ///
        /// Cold: nothing is sent until a subscriber asks for a value. Cancelling the subscription cancels the
        /// upload at once. A slow subscriber skips progress values, it never gets a backlog (the one it gets
        /// may be one step behind: read ahead while it had not asked). Once the upload returned, a progress
        /// value not asked for is dropped: the response comes with the next demand, a failure at once.
        ///
        /// ```swift
        /// provider.uploadPublisher(ClipAPI.put(file))
        ///     .compactMap(\.progress?.fraction)
        ///     .receive(on: DispatchQueue.main)
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { fraction in self.bar.progress = Float(fraction) })
        ///     .store(in: &cancellables)
        /// ```
        public func uploadPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<TransferEvent<Response>, any Error> {
            DemandPublisher { subscription in
                try await subscription.sendTransfer { reporter in
                    try await self.upload(endpoint, interceptor: interceptor, progress: reporter)
                }
            }
            .eraseToAnyPublisher()
        }

        /// A publisher that uploads `endpoint`'s body when subscribed and decodes the answer as `type` (see
        /// ``upload(_:as:interceptor:progress:)``: the envelope and the endpoint's decoder apply): it emits
        /// ``TransferEvent/progress(_:)`` values while the body is sent, then ``TransferEvent/completed(_:)``
        /// with the decoded value, then finishes; otherwise it is ``uploadPublisher(_:interceptor:)``.
        ///
        /// ```swift
        /// provider.uploadPublisher(PhotoAPI.post(form), as: Photo.self)
        ///     .compactMap(\.outcome)
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { photo in self.show(photo) })
        ///     .store(in: &cancellables)
        /// ```
        public func uploadPublisher<T: Decodable & Sendable>(
            _ endpoint: some Endpoint,
            as type: T.Type,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<TransferEvent<T>, any Error> {
            DemandPublisher { subscription in
                try await subscription.sendTransfer { reporter in
                    try await self.upload(endpoint, as: type, interceptor: interceptor, progress: reporter)
                }
            }
            .eraseToAnyPublisher()
        }

        /// A publisher that downloads `endpoint`'s body into `destination` when subscribed (see
        /// ``download(_:to:interceptor:progress:)``): progress values, then the response, then it finishes;
        /// see ``uploadPublisher(_:interceptor:)``. Cancelling the subscription cancels the download and
        /// removes what arrived of the body.
        public func downloadPublisher(
            _ endpoint: some Endpoint,
            to destination: URL,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<TransferEvent<Response>, any Error> {
            DemandPublisher { subscription in
                try await subscription.sendTransfer { reporter in
                    try await self.download(endpoint, to: destination, interceptor: interceptor, progress: reporter)
                }
            }
            .eraseToAnyPublisher()
        }

        /// A publisher that downloads `endpoint`'s body into `destination`, continuing `resumable` (see
        /// ``download(_:to:resuming:interceptor:progress:)``), that keeps what arrived when it fails or is
        /// cancelled.
        ///
        /// It emits progress values (a resumed download starts from the bytes kept), then the response, then
        /// finishes. When the download fails with part of the body kept, the publisher fails with
        /// ``DownloadInterrupted``, whose ``DownloadInterrupted/resumable`` continues it later. A cancelled
        /// subscription is told nothing (Combine sends no completion after `cancel()`): `onCancel` receives
        /// that value instead, when part of the body was kept. When the download fails as the subscription
        /// is cancelled, exactly one of them gets it. A subscription cancelled before its first demand, or
        /// after it ended, never calls `onCancel`.
        ///
        /// ```swift
        /// provider.downloadPublisher(MapPack(), to: destination, resuming: saved, onCancel: { saved = $0 })
        ///     .sink(receiveCompletion: { completion in
        ///         if case .failure(let interrupted as DownloadInterrupted) = completion { saved = interrupted.resumable }
        ///     }, receiveValue: { _ in })
        /// ```
        ///
        /// - Parameters:
        ///   - endpoint: the call.
        ///   - destination: the file URL the body lands at; its folder must exist and be writable.
        ///   - resumable: what an earlier call kept, or `nil` to start from the first byte.
        ///   - interceptor: runs after the provider's own interceptor, for this call only.
        ///   - onCancel: called once, from any thread, with what continues the download when the
        ///     subscription was cancelled after part of the body was kept.
        public func downloadPublisher(
            _ endpoint: some Endpoint,
            to destination: URL,
            resuming resumable: ResumableDownload?,
            interceptor: (any RequestInterceptor)? = nil,
            onCancel: (@Sendable (ResumableDownload) -> Void)? = nil
        ) -> AnyPublisher<TransferEvent<Response>, any Error> {
            DemandPublisher { subscription in
                try await subscription.sendTransfer(onCancel: onCancel) { reporter in
                    try await self.download(endpoint, to: destination, resuming: resumable, interceptor: interceptor, progress: reporter)
                }
            }
            .eraseToAnyPublisher()
        }

        /// A publisher that continues an interrupted download into `destination` (see
        /// ``download(resuming:to:interceptor:progress:)``); otherwise it is
        /// ``downloadPublisher(_:to:resuming:interceptor:onCancel:)``.
        ///
        /// ```swift
        /// provider.downloadPublisher(resuming: saved, to: destination, onCancel: { saved = $0 })
        /// ```
        public func downloadPublisher(
            resuming resumable: ResumableDownload,
            to destination: URL,
            interceptor: (any RequestInterceptor)? = nil,
            onCancel: (@Sendable (ResumableDownload) -> Void)? = nil
        ) -> AnyPublisher<TransferEvent<Response>, any Error> {
            DemandPublisher { subscription in
                try await subscription.sendTransfer(onCancel: onCancel) { reporter in
                    try await self.download(resuming: resumable, to: destination, interceptor: interceptor, progress: reporter)
                }
            }
            .eraseToAnyPublisher()
        }
    }
#endif
