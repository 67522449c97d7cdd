#if canImport(Combine)
    // Apple platforms only: Combine is not on Linux, so this file is not built by CI. The rules it relies on
    // (nothing runs before it starts, one result, cancellation) live in StartedCall.swift, which is tested.
    import Combine
    import Foundation

    extension NetworkProviding {
        /// A publisher that sends `endpoint` when subscribed, then emits the decoded body once and finishes.
        ///
        /// Cold: nothing is sent until a subscriber asks for a value, and each subscription sends its own
        /// call. Cancelling the subscription cancels the call (and its `URLSessionTask`). The failure is the
        /// error the call threw: a ``NetworkError``, unless your error mapper or a retrier threw your own.
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
            CallPublisher { try await self.request(endpoint, as: type, interceptor: interceptor) }.eraseToAnyPublisher()
        }

        /// A publisher that sends `endpoint` when subscribed, then emits its ``Response`` once and finishes;
        /// see ``requestPublisher(_:as:interceptor:)``.
        public func responsePublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<Response, any Error> {
            CallPublisher { try await self.response(endpoint, interceptor: interceptor) }.eraseToAnyPublisher()
        }

        /// A publisher that sends `endpoint` when subscribed, then emits once (no value to speak of: a
        /// `204 No Content`) and finishes; see ``requestPublisher(_:as:interceptor:)``.
        public func requestPublisher(
            _ endpoint: some Endpoint,
            interceptor: (any RequestInterceptor)? = nil
        ) -> AnyPublisher<Void, any Error> {
            CallPublisher { try await self.request(endpoint, interceptor: interceptor) }.eraseToAnyPublisher()
        }
    }

    /// Emits the result of one call per subscription.
    private struct CallPublisher<Output: Sendable>: Publisher {
        typealias Failure = any Error

        let operation: @Sendable () async throws -> Output

        func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == any Error {
            subscriber.receive(subscription: CallSubscription(subscriber: AnySubscriber(subscriber), operation: operation))
        }
    }

    /// Starts the call on the first demand; delivers its value and completion, or nothing once cancelled.
    ///
    /// The running call holds this subscription (its completion captures `self` strongly) until the call
    /// reports or is cancelled, then lets go (see `StartedCall`): the value arrives even when the app
    /// keeps only the `AnyCancellable`, or nothing holds the subscription, and no cycle outlives the call.
    private final class CallSubscription<Output: Sendable>: Subscription, @unchecked Sendable {
        // @unchecked: `subscriber` and `call` are guarded by `lock`; Combine may call request and cancel
        // from any thread.
        private let lock = NSLock()
        private var subscriber: AnySubscriber<Output, any Error>?
        private var call: StartedCall<Output>?
        private let operation: @Sendable () async throws -> Output

        init(subscriber: AnySubscriber<Output, any Error>, operation: @escaping @Sendable () async throws -> Output) {
            self.subscriber = subscriber
            self.operation = operation
        }

        func request(_ demand: Subscribers.Demand) {
            guard demand > 0 else { return }
            lock.lock()
            guard subscriber != nil, call == nil else {
                lock.unlock()
                return
            }
            let started = StartedCall.start(operation) { result in self.deliver(result) }
            call = started
            lock.unlock()
        }

        func cancel() {
            lock.lock()
            let call = self.call
            subscriber = nil
            lock.unlock()
            call?.cancel()
        }

        private func deliver(_ result: Result<Output, any Error>) {
            lock.lock()
            let subscriber = self.subscriber
            self.subscriber = nil
            lock.unlock()
            guard let subscriber else { return }
            switch result {
            case .success(let value):
                _ = subscriber.receive(value)
                subscriber.receive(completion: .finished)
            case .failure(let error):
                subscriber.receive(completion: .failure(error))
            }
        }
    }
#endif
