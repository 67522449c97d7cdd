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
        /// A publisher that sends `endpoint` when subscribed and emits its body's chunks as they arrive (see
        /// ``stream(_:interceptor:)``), then finishes when the body ended whole.
        ///
        /// Demand is respected: the ``ResponseStream`` is read as the subscriber asks, one chunk ahead at
        /// most. That holds back the reading, not the network, on every platform: the body keeps arriving
        /// into the stream's buffer, which holds at most the endpoint's ``Endpoint/maximumResponseSize`` of
        /// unread body. So a subscriber slower than the network makes a long stream fail with
        /// ``NetworkError/responseTooLarge(limit:)`` once that much is unread (memory stays bounded). The end
        /// of the body, or its failure, reaches the subscriber without waiting for demand. Cancelling the
        /// subscription cancels the transfer at once.
        ///
        /// ```swift
        /// provider.streamPublisher(FileAPI.log)
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { chunk in parser.feed(chunk) })
        ///     .store(in: &cancellables)
        /// ```
        public func streamPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<Data, any Error> {
            DemandPublisher { subscription in
                try await subscription.send(contentsOf: self.stream(endpoint, interceptor: interceptor))
            }
            .eraseToAnyPublisher()
        }

        /// A publisher of the body's lines of UTF-8 text (see ``ResponseStream/lines``), read as the subscriber
        /// asks for them; see ``streamPublisher(_:interceptor:)``.
        ///
        /// ```swift
        /// provider.linesPublisher(ChatAPI.reply(to: question))
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { line in print(line) })
        ///     .store(in: &cancellables)
        /// ```
        public func linesPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<String, any Error> {
            DemandPublisher { subscription in
                try await subscription.send(contentsOf: self.stream(endpoint, interceptor: interceptor).lines)
            }
            .eraseToAnyPublisher()
        }

        /// A publisher of the body's Server-Sent Events (see ``ResponseStream/events``), read as the subscriber
        /// asks for them; see ``streamPublisher(_:interceptor:)``.
        ///
        /// ```swift
        /// provider.eventsPublisher(ChatAPI.reply(to: question))
        ///     .filter { $0.event == "token" }
        ///     .sink(receiveCompletion: { _ in }, receiveValue: { event in print(event.data, terminator: "") })
        ///     .store(in: &cancellables)
        /// ```
        public func eventsPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<ServerSentEvent, any Error> {
            DemandPublisher { subscription in
                try await subscription.send(contentsOf: self.stream(endpoint, interceptor: interceptor).events)
            }
            .eraseToAnyPublisher()
        }
    }
#endif
