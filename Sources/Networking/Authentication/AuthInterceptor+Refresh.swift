import Foundation

/// The refresh machinery of ``AuthInterceptor``: loading, the one shared refresh, and store writes.
extension AuthInterceptor {
    /// What a request that needs a credential gets when there is none.
    var noCredentialError: NetworkError {
        sessionDidExpire ? .sessionExpired : .missingCredential
    }

    /// The credential, read from the store the first time. Calls that arrive while it is being read wait
    /// for that one read (a launch's concurrent calls read the Keychain once, not once each); each can
    /// leave when its task is cancelled. A read that fails fails its waiters, and the next call reads again.
    func loadedCredential() async throws -> Credential? {
        guard !isLoaded else { return credential }
        let read: SharedResult<Void>
        if let storeRead {
            read = storeRead
        } else {
            read = SharedResult()
            storeRead = read
            let store = self.store
            Task {   // on this actor: it inherits the isolation, so the state below changes in one step
                let result: Result<Void, any Error>
                do {
                    let stored = try await store.load()
                    if !isLoaded {   // a sign-in or refresh may have finished while the store was read
                        credential = stored
                        isLoaded = true
                    }
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                if storeRead === read { storeRead = nil }
                read.finish(result)
            }
        }
        try await read.value()
        return credential
    }

    /// The token to send now: the current one, or a refreshed one when it is about to expire.
    func accessToken(for context: RequestContext) async throws -> String {
        if let refreshTask { return try await token(from: refreshTask, fallback: proactiveFallback) }
        guard let current = try await loadedCredential() else { throw noCredentialError }
        if let refreshTask { return try await token(from: refreshTask, fallback: proactiveFallback) }
        guard needsProactiveRefresh(current) else { return current.accessToken }
        do {
            return try await token(from: try startRefresh(from: current, proactive: true, for: context), fallback: current)
        } catch let error where isTransient(error) {
            return current.accessToken   // the refresh window is full: the server decides whether it still works
        }
    }

    /// The token `task` refreshes to; if it fails for a transient reason, `fallback`'s (a proactive
    /// refresh's starting credential, shared by everyone waiting on it). The fallback is sent even when
    /// the device's clock says it has expired: the server's clock decides, and a 401 still refreshes.
    private func token(from task: RefreshTask, fallback: Credential?) async throws -> String {
        refreshWaiterCount += 1
        defer { refreshWaiterCount -= 1 }
        do {
            return try await task.valueUnlessCancelled().accessToken
        } catch {
            guard let fallback, isTransient(error) else { throw error }
            return fallback.accessToken
        }
    }

    /// Whether a token that expires at `expiry` is, at `now`, within ``refreshLeeway`` of it (or past it):
    /// the one rule of the proactive refresh, the short-lived token and the published token's fast path.
    nonisolated func isWithinLeeway(_ expiry: Date, at now: Date) -> Bool {
        expiry.timeIntervalSince(now) <= refreshLeeway
    }

    /// Whether `current` is refreshed before sending: its expiry is known and within the leeway, it is
    /// not a refreshed token that was born inside the leeway, and no failed proactive refresh asked
    /// for a pause (whatever the device's clock says about the token).
    private func needsProactiveRefresh(_ current: Credential) -> Bool {
        guard let expiry, current.accessToken != shortLivedToken else { return false }
        let now = now()
        guard isWithinLeeway(expiry, at: now) else { return false }
        if let proactivePausedUntil, now < proactivePausedUntil { return false }
        return true
    }

    /// Whether a refresh error leaves the session intact (not a rejection, sign-out or cancellation).
    private func isTransient(_ error: any Error) -> Bool {
        switch error {
        case is CancellationError, NetworkError.cancelled, NetworkError.sessionExpired, NetworkError.missingCredential: return false
        default: return true
        }
    }

    /// The credential to use instead of one whose access token is `failedToken`, which failed with
    /// `status`: the current one when it is newer, else the result of the one shared refresh; `nil`
    /// when the request should not be retried (a status other than 401 for a token that came from a
    /// refresh moments ago, and the store holds nothing newer).
    func credential(replacing failedToken: String?, status: Int, for context: RequestContext) async throws -> Credential? {
        if let refreshTask { return try await refreshTask.valueUnlessCancelled() }
        guard let current = try await loadedCredential() else { throw noCredentialError }
        if let refreshTask { return try await refreshTask.valueUnlessCancelled() }
        if failedToken != current.accessToken { return current }
        if status != 401, let lastRefresh, lastRefresh.accessToken == current.accessToken,
            now().timeIntervalSince(lastRefresh.date) < Self.recentRefreshInterval
        {
            return await adoptStoredCredential(insteadOf: current)
        }
        return try await startRefresh(from: current, proactive: false, for: context).valueUnlessCancelled()
    }

    /// A credential another process saved in the shared store since `used` was current, adopted as
    /// the current one; `nil` when the store holds `used`, nothing, or a credential this interceptor
    /// held before (say, after a save failed: never roll back to it). Waits for this interceptor's own
    /// writes first, so that it never reads back a state of its own still being written.
    private func adoptStoredCredential(insteadOf used: Credential) async -> Credential? {
        let startGeneration = generation
        _ = await lastStoreWrite?.result
        let stored: Credential?
        do {
            stored = try await store.load()
        } catch {
            broadcaster.send(.storeFailed(error))
            return nil
        }
        guard startGeneration == generation, credential == used else { return credential }   // changed meanwhile
        guard let stored, stored != used, !heldAccessTokens.contains(stored.accessToken) else { return nil }
        credential = stored
        lastRefresh = nil
        shortLivedToken = nil
        return stored
    }

    /// Starts the one refresh (no suspension between the callers' checks and here). The provider
    /// monitors of `context`, the call that triggered it, hear about it, and the refresh is sent
    /// through that call's provider.
    private func startRefresh(from current: Credential, proactive: Bool, for context: RequestContext) throws -> RefreshTask {
        let startedAt = now()
        refreshDates = refreshDates.filter { startedAt.timeIntervalSince($0) < refreshWindow.interval }
        guard refreshDates.count < refreshWindow.maximumCount else {
            throw NetworkError.excessiveRefresh(count: refreshDates.count, window: refreshWindow.interval)
        }
        refreshDates.append(startedAt)
        broadcaster.send(.refreshStarted)
        context.events.send { $0.tokenRefreshDidStart(context: context) }
        let network = RefreshSender(provider: context.provider, interceptorID: id)
        let run = RefreshRun(interceptorID: id)
        let shared = SharedResult<Credential>()
        let task = Task { [refresh, generation] in
            let outcome = await run.run { try await refresh(current, network) }
            switch outcome.result {
            case .success: context.events.send { $0.tokenRefreshDidSucceed(context: context) }
            case .failure(let error): context.events.send { $0.tokenRefreshDidFail(error, context: context) }
            }
            do {
                let renewed = try await self.finishRefresh(outcome, from: current, startedIn: generation, proactive: proactive)
                shared.finish(.success(renewed))
                return renewed
            } catch {
                shared.finish(.failure(error))
                throw error
            }
        }
        let running = RefreshTask(task: task, shared: shared)
        refreshTask = running
        proactiveFallback = proactive ? current : nil
        return running
    }

    private func finishRefresh(
        _ outcome: (result: Result<Credential, any Error>, status: Int?),
        from origin: Credential,
        startedIn startGeneration: Int,
        proactive: Bool
    ) async throws -> Credential {
        guard startGeneration == generation else { return try credentialOfNewerSession() }
        switch outcome.result {
        case .success(var renewed):
            if renewed.account == nil { renewed.account = origin.account }   // the same person, a new token
            credential = renewed   // before any suspension: readers never see the old one again
            endRefresh()
            lastRefresh = (renewed.accessToken, now())
            shortLivedToken = expiry.map { isWithinLeeway($0, at: now()) } == true ? renewed.accessToken : nil
            proactivePausedUntil = nil
            broadcaster.send(.refreshSucceeded)
            await writeStoreReportingFailure()
            return renewed
        case .failure(let error) where isRejected(error, status: outcome.status):
            // Another process sharing the store may have spent this refresh token first.
            let adopted = await adoptStoredCredential(insteadOf: origin)
            guard startGeneration == generation else { return try credentialOfNewerSession() }
            if let adopted {
                endRefresh()
                return adopted
            }
            credential = nil
            sessionDidExpire = true
            endRefresh()
            broadcaster.send(.sessionExpired)
            await writeStoreReportingFailure()
            await cacheClearing?.value
            throw NetworkError.sessionExpired
        case .failure(let error):
            endRefresh()
            if proactive { proactivePausedUntil = now().addingTimeInterval(Self.proactiveRefreshPause) }
            broadcaster.send(.refreshFailed(error))
            throw NetworkError.refreshFailed(error)
        }
    }

    /// The user signed in or out while a refresh ran: its result belongs to a session that is gone.
    private func credentialOfNewerSession() throws -> Credential {
        guard let credential else { throw noCredentialError }
        return credential
    }

    private func endRefresh() {
        refreshTask = nil
        proactiveFallback = nil
    }

    private func isRejected(_ error: any Error, status: Int?) -> Bool {
        rejection.judges(error, status: status)
    }

    // MARK: Store writes

    /// Writes the state held in memory at the time the write runs (the credential, or none), after the
    /// write before it: writes never overlap, and the last one always writes the latest state.
    func writeStore() -> Task<Void, any Error> {
        let previous = lastStoreWrite
        let task = Task {
            _ = await previous?.result
            if let latest = credential {
                try await store.save(latest)
            } else {
                try await store.delete()
            }
        }
        lastStoreWrite = task
        return task
    }

    private func writeStoreReportingFailure() async {
        do { try await writeStore().value } catch { broadcaster.send(.storeFailed(error)) }
    }
}
