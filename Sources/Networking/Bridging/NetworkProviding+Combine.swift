// Apple platforms only in the library (Combine is not on Linux, where this file compiles to nothing); CI
// compiles and tests it against OpenCombine in the CombineBridge package (see DemandPublisher.swift).
#if !NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine)
    import Networking
    import OpenCombine
#endif

#if (!NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine))
    import Foundation

    extension NetworkProviding {
        /// A publisher that sends `endpoint` when subscribed, then emits the decoded body once and finishes.
        ///
        /// Cold: nothing is sent until a subscriber asks for a value, and each subscription sends its own
        /// call. Cancelling the subscription cancels the call (and its `URLSessionTask`) at once. The failure
        /// is the error the call threw: a ``NetworkError``, unless your error mapper or a retrier threw your
        /// own. Values arrive on a thread of the concurrency pool: use `receive(on:)` to move them.
        ///
        /// ```swift
        /// provider.requestPublisher(UserAPI.user(id: 1), as: User.self)
        ///     .receive(on: DispatchQueue.main)
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { user in self.user = user })
        ///     .store(in: &cancellables)
        /// ```
        public func requestPublisher<T: Decodable & Sendable>(
            _ endpoint: some Endpoint,
            as type: T.Type,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<T, any Error> {
            callPublisher { try await self.request(endpoint, as: type, interceptor: interceptor) }
        }

        /// A publisher that sends `endpoint` when subscribed, then emits its ``Response`` once and finishes;
        /// see ``requestPublisher(_:as:interceptor:)``.
        public func responsePublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<Response, any Error> {
            callPublisher { try await self.response(endpoint, interceptor: interceptor) }
        }

        /// A publisher that sends `endpoint` when subscribed, then emits once (no value to speak of: a
        /// `204 No Content`) and finishes; see ``requestPublisher(_:as:interceptor:)``.
        public func requestPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<Void, any Error> {
            callPublisher { try await self.request(endpoint, interceptor: interceptor) }
        }

        /// A publisher of ``cachedThenFresh(_:as:interceptor:)``: when subscribed, it emits the stored value
        /// at once (when the cache holds one), then the server's value (unless the server confirmed the
        /// stored one with `304 Not Modified`, RFC 9111 §4.3.4), then finishes.
        ///
        /// An error of the network part fails the publisher after the stored value. Cold, and cancelled with
        /// its subscription, as ``requestPublisher(_:as:interceptor:)``; the server is asked only when the
        /// subscriber asked for a value.
        ///
        /// ```swift
        /// provider.cachedThenFreshPublisher(UserAPI.user(id: 1), as: User.self)
        ///     .map(\.value)
        ///     .receive(on: DispatchQueue.main)
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { user in self.user = user })
        ///     .store(in: &cancellables)
        /// ```
        public func cachedThenFreshPublisher<T: Decodable & Sendable>(
            _ endpoint: some Endpoint,
            as type: T.Type,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<CachedOrFresh<T>, any Error> {
            DemandPublisher { subscription in
                try await subscription.send(contentsOf: self.cachedThenFresh(endpoint, as: type, interceptor: interceptor))
            }
            .eraseToAnyPublisher()
        }

        /// A publisher that runs `operation` once per subscription, from the first demand, and emits its
        /// result.
        private func callPublisher<Output: Sendable>(
            _ operation: @escaping @Sendable () async throws -> Output
        ) -> AnyPublisher<Output, any Error> {
            DemandPublisher { subscription in
                try await subscription.reserve()
                subscription.send(try await operation())
            }
            .eraseToAnyPublisher()
        }
    }
#endif
