import Foundation

/// The test server's token state: issued tokens, expiry, rotation, revocation and counters.
public actor AuthState {
    private var generation = 0
    private var validAccessTokens: Set<String> = []
    private var validRefreshToken: String?
    private(set) public var refreshCount = 0
    private(set) public var rejectedRefreshCount = 0
    /// Header values the foreign listener received, by header name (lower-cased).
    private(set) public var foreignRequests: [[String: String]] = []
    /// Requests per flaky key so far.
    private var flakyCalls: [String: Int] = [:]

    public init() {}

    /// Issues a new pair: the previous access and refresh tokens stop working.
    public func issue() -> (accessToken: String, refreshToken: String) {
        generation += 1
        let access = "access-\(generation)-\(UUID().uuidString.prefix(8))"
        let refresh = "refresh-\(generation)-\(UUID().uuidString.prefix(8))"
        validAccessTokens = [access]
        validRefreshToken = refresh
        return (access, refresh)
    }

    /// Spends a refresh token: a new pair when it is the current one, nil (and counted) otherwise.
    public func refresh(with token: String) -> (accessToken: String, refreshToken: String)? {
        refreshCount += 1
        guard token == validRefreshToken else {
            rejectedRefreshCount += 1
            return nil
        }
        return issue()
    }

    /// How many access tokens were refused by ``isValid(accessToken:)`` (each is a 401 of `/items`).
    private(set) public var refusedAccessTokenCount = 0

    /// Whether `accessToken` works now; a refused one is counted.
    public func isValid(accessToken: String) -> Bool {
        let valid = validAccessTokens.contains(accessToken)
        if !valid { refusedAccessTokenCount += 1 }
        return valid
    }

    /// Expires every access token (as if their lifetime ran out).
    public func expireAccessTokens() { validAccessTokens = [] }

    // The gate of `GET /events`: event 1 goes out, then the rest wait until the gate is open.
    private var eventGateOpen = false
    /// Whether events after the first were sent because the gate was opened (not after the 5 s fallback).
    public private(set) var eventGatePassedOpen: [Bool] = []
    public func openEventGate() { eventGateOpen = true }
    public var isEventGateOpen: Bool { eventGateOpen }
    public func recordEventGatePassed() { eventGatePassedOpen.append(eventGateOpen) }

    /// Revokes the refresh token and expires the access tokens: the session is over.
    public func revoke() {
        validAccessTokens = []
        validRefreshToken = nil
    }

    public func recordForeign(_ headers: [String: String]) { foreignRequests.append(headers) }

    /// Counts a call to a flaky key and returns how many came before it.
    public func flakyCall(_ key: String) -> Int {
        defer { flakyCalls[key, default: 0] += 1 }
        return flakyCalls[key, default: 0]
    }
}
