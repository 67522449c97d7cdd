// Apple platforms only in the library; see DemandPublisher.swift.
#if !NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)
    import Combine
#elseif NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine)
    import Networking
    import OpenCombine
#endif

#if (!NETWORKING_COMBINE_BRIDGE_PACKAGE && canImport(Combine)) || (NETWORKING_COMBINE_BRIDGE_PACKAGE && !canImport(Combine) && canImport(OpenCombine))
    import Foundation

    extension AuthInterceptor {
        /// A publisher of the interceptor's ``AuthEvent``s (see ``events()``): each subscriber gets the events
        /// sent from the moment it subscribed, and the publisher finishes when the interceptor is released.
        ///
        /// A subscriber that asks for fewer events than are sent gets the newest ones when it asks (up to 64
        /// are kept for it, as ``events()`` keeps them). The subscription holds the event stream, not the
        /// interceptor.
        ///
        /// ```swift
        /// auth.eventsPublisher()
        ///     .receive(on: DispatchQueue.main)
        ///     .sink { event in if case .sessionExpired = event { self.showSignIn() } }
        ///     .store(in: &cancellables)
        /// ```
        public nonisolated func eventsPublisher() -> AnyPublisher<AuthEvent, Never> {
            DemandPublisher<AuthEvent, Never>(
                makeBody: {
                    let events = self.events()   // at subscription: no event sent after it is missed
                    return { subscription in try await subscription.send(contentsOf: events) }
                },
                completion: { _ in .finished }   // only a cancelled subscription's body throws, and it hears nothing
            )
            .eraseToAnyPublisher()
        }
    }
#endif
