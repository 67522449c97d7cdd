import Foundation

extension Outbox {
    /// How an account matches the one signed in with the interceptor that attaches its token.
    enum AccountMatch {
        /// It is signed in (or no token is attached).
        case current
        /// Another account is signed in.
        case another
        /// Nobody is signed in, the session expired, or the credential store cannot be read.
        case unknown
    }

    /// An account signed out of (or switched away from) an interceptor, under ``OutboxAccountPolicy/discard``.
    struct Dismissal: Hashable {
        let interceptor: ObjectIdentifier
        let account: String
    }

    /// Whether `record` belongs to an account signed out of its interceptor under `.discard`.
    func isDismissed(_ record: OutboxRecord) -> Bool {
        guard let account = record.account, let auth = interceptor(of: record) else { return false }
        return dismissed.contains(Dismissal(interceptor: ObjectIdentifier(auth), account: account))
    }

    /// The interceptor that attaches `record`'s token, if any.
    func interceptor(of record: OutboxRecord) -> AuthInterceptor? {
        guard let url = URL(string: record.url) else { return nil }
        return provider.authInterceptor(for: url, requiresAuthentication: record.requiresAuthentication)
    }

    /// Whether `account` is the one signed in with `auth`.
    func match(_ account: String, with auth: AuthInterceptor?) async -> AccountMatch {
        guard let auth else { return .current }   // no token attached: no account to match
        do {
            guard let current = try await auth.currentAccount() else { return .unknown }
            return current == account ? .current : .another
        } catch {
            return .unknown   // a store error (a locked Keychain) is no account change: held, never discarded
        }
    }

    /// `auth`'s signed-in account changed to `account`: its paused mutations go now; under
    /// ``OutboxAccountPolicy/discard`` the mutations of other accounts bound to `auth` (not another
    /// interceptor's) are discarded.
    func accountDidChange(to account: String?, with auth: AuthInterceptor) async {
        for (id, entry) in entries where entry.record.account != nil && entry.record.account == account && entry.isBackingOff {
            backoffTasks.removeValue(forKey: id)?.cancel()   // its account is back: try it now
            entries[id]?.isBackingOff = false
        }
        if configuration.accountPolicy == .discard {
            let others = Set(entries.values.filter { interceptor(of: $0.record) === auth }.compactMap(\.record.account)).filter { $0 != account }
            if let account { dismissed.remove(Dismissal(interceptor: ObjectIdentifier(auth), account: account)) }
            for other in others {
                dismissed.insert(Dismissal(interceptor: ObjectIdentifier(auth), account: other))
                await discardAll(of: other, with: auth)
            }
        }
        wake()
    }

    /// Removes every mutation of `account` bound to `auth` (but one in flight, which its own check stops) as
    /// discarded.
    func discardAll(of account: String, with auth: AuthInterceptor) async {
        let ids = entries.values.filter { $0.record.account == account && !inFlight.contains($0.record.id) && interceptor(of: $0.record) === auth }
            .sorted { $0.record.sequence < $1.record.sequence }
        for entry in ids where entries[entry.record.id] != nil {
            try? await remove(entry.record.id, outcome: { .discarded($0, reason: .accountChanged) })   // a failed removal is tried again next time
        }
    }
}
