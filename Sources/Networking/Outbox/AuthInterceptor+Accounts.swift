import Foundation

extension AuthInterceptor {
    /// The token to send now for a call bound to `account`, or ``OutboxError/accountChanged(expected:)`` when
    /// the signed-in account is another one (or none). The last check and the return happen in one turn of
    /// this actor, with no suspension between them: a sign-out or switch either happened before it (the call
    /// throws, nothing is sent) or happens after the token was handed out (which was `account`'s).
    func accessToken(for context: RequestContext, boundTo account: String) async throws -> String {
        guard try await loadedCredential()?.account == account, !sessionDidExpire else { throw OutboxError.accountChanged(expected: account) }
        let token = try await accessToken(for: context)
        guard let credential, credential.account == account, !sessionDidExpire else { throw OutboxError.accountChanged(expected: account) }
        return token
    }

    /// The account signed in now (the store read first when it was not yet), `nil` for none.
    func currentAccount() async throws -> String? {
        guard !sessionDidExpire else { return nil }
        return try await loadedCredential()?.account
    }
}

extension NetworkProvider {
    /// The ``AuthInterceptor``s of the provider's interceptor (itself, or inside an ``Interceptor``).
    var authInterceptors: [AuthInterceptor] {
        func found(in adapter: any RequestAdapter) -> [AuthInterceptor] {
            if let auth = adapter as? AuthInterceptor { return [auth] }
            if let composite = adapter as? Interceptor { return composite.adapters.flatMap(found(in:)) }
            return []
        }
        return interceptor.map(found(in:)) ?? []
    }

    /// The interceptor that attaches a token to a request for `url`, when the endpoint needs one.
    func authInterceptor(for url: URL, requiresAuthentication: Bool) -> AuthInterceptor? {
        guard requiresAuthentication else { return nil }
        let origin = Origin(url)
        return authInterceptors.first { $0.scope.contains(origin) }
    }
}
