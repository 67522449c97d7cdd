import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What makes two calls the same exchange, so that they may share one (see ``CallGroups``): everything
/// the request carries as the endpoint and the configuration built it, the account it is sent for, and
/// the endpoint's settings that decide what the shared pipeline does with the answer.
///
/// - The request: its method, URL, every header field with its value exactly as built (the endpoint's and
///   the configuration's additional headers; an app's own `If-None-Match` or `Range` included, so only
///   calls that send the same preconditions share), and its idle timeout. No normalisation: two calls
///   that spell a field differently do not share (a missed sharing costs an exchange, a wrong one would
///   cost a wrong answer). A call with a body never gets a key.
/// - The account (RFC 9111 §4 keys a private cache's answers by it, and so does ``CachePartitioning``):
///   the partition of the ``AuthInterceptor`` that authenticates the call and its account epoch, which
///   changes on every sign-in and sign-out; `nil` when no interceptor authenticates it. A call
///   authenticated for no known account never gets a key: two users never share.
/// - The endpoint: its type, statuses, size limit, cache policy, offline behaviour, priority and whether
///   it requires authentication; whether it names a redirect behaviour or an envelope (closures, which
///   cannot be compared: an endpoint type is taken to name the same ones for the same request).
///
/// A class: the groups' dictionary, the group and each of its exchanges hold the one key (a value of these
/// fields, copied into each, made a queued call hold three copies of it).
///
/// Hashed once, when made: the groups' dictionary hashes a key on every look-up, insertion and removal,
/// and hashing every field (a set of a hundred statuses is a hundred hashes) each time cost a call more
/// than the rest of the key. The stored hash mixes the fields that tell calls apart in practice (the set
/// and the dictionary by their size only); equality still compares every field.
final class CallGroupKey: Hashable, @unchecked Sendable {
    // @unchecked: ObjectIdentifier, strings, sets and CachePolicy are values; nothing here is mutated.
    let url: String
    let headers: [String: String]
    let timeout: TimeInterval
    let account: String?
    let accountEpoch: Int
    let endpointType: ObjectIdentifier
    let acceptableStatusCodes: Set<Int>
    /// The endpoint's size limit, `Int.min` for none.
    let maximumResponseSize: Int
    /// The hash of the fields, computed once (see the type's comment).
    private let hash: Int
    let cachePolicy: CachePolicy?
    // The small fields last, together, where they take no room of their own (a queued call holds a key).
    /// Its method: `HEAD`, or else `GET` (no other method has a key).
    let isHead: Bool
    let offlineBehavior: UInt8
    let priority: RequestPriority
    let requiresAuthentication: Bool
    let namesRedirectBehavior: Bool
    let namesEnvelope: Bool

    /// The key of `request`, built by `endpoint` with no body, sent for `account` (the partition and epoch
    /// of the ``AccountStamp``; `(nil, 0)` when not authenticated); `nil` for a method other than `GET` and
    /// `HEAD`.
    init?<E: Endpoint>(_ request: URLRequest, endpoint: E, account: (partition: String?, epoch: Int)) {
        guard let method = request.httpMethod, method == "GET" || method == "HEAD", let url = request.url,
            request.httpBody == nil, request.httpBodyStream == nil
        else { return nil }
        self.isHead = method == "HEAD"
        self.url = url.absoluteString
        self.headers = request.allHTTPHeaderFields ?? [:]
        self.timeout = request.timeoutInterval
        self.account = account.partition
        self.accountEpoch = account.epoch
        self.endpointType = ObjectIdentifier(E.self)
        self.acceptableStatusCodes = endpoint.acceptableStatusCodes
        self.maximumResponseSize = endpoint.maximumResponseSize ?? .min
        self.cachePolicy = endpoint.cachePolicy
        switch endpoint.offlineBehavior {
        case nil: offlineBehavior = 0
        case .wait?: offlineBehavior = 1
        case .fail?: offlineBehavior = 2
        }
        self.priority = endpoint.priority
        self.requiresAuthentication = endpoint.requiresAuthentication
        self.namesRedirectBehavior = endpoint.redirectBehavior != nil
        self.namesEnvelope = endpoint.envelope != nil
        var hasher = Hasher()
        hasher.combine(self.url)
        hasher.combine(isHead)
        hasher.combine(headers.count)
        hasher.combine(self.account)
        hasher.combine(accountEpoch)
        hasher.combine(endpointType)
        hasher.combine(acceptableStatusCodes.count)
        hasher.combine(priority)
        self.hash = hasher.finalize()
    }

    static func == (lhs: CallGroupKey, rhs: CallGroupKey) -> Bool {
        lhs === rhs
            || lhs.hash == rhs.hash && lhs.url == rhs.url && lhs.isHead == rhs.isHead && lhs.headers == rhs.headers
                && lhs.timeout == rhs.timeout && lhs.account == rhs.account && lhs.accountEpoch == rhs.accountEpoch
                && lhs.endpointType == rhs.endpointType && lhs.acceptableStatusCodes == rhs.acceptableStatusCodes
                && lhs.maximumResponseSize == rhs.maximumResponseSize && lhs.cachePolicy == rhs.cachePolicy
                && lhs.offlineBehavior == rhs.offlineBehavior && lhs.priority == rhs.priority
                && lhs.requiresAuthentication == rhs.requiresAuthentication && lhs.namesRedirectBehavior == rhs.namesRedirectBehavior
                && lhs.namesEnvelope == rhs.namesEnvelope
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
