import Foundation

/// Where the provider keeps the responses it may answer again without asking the server: the store of
/// the provider's HTTP cache (see ``CachePolicy`` for what is stored and when an entry is used).
///
/// Two stores come with the package: ``MemoryResponseCache`` (byte-bounded, least recently used first
/// out) and ``DiskResponseCache`` (a folder that survives relaunches). Write your own to keep entries
/// elsewhere; the provider decides every HTTP rule itself, so a store only keeps what it is given.
///
/// A store is best-effort: it never throws. An entry it cannot read back (a truncated or corrupt file)
/// is a miss, and one it cannot write is simply not there next time.
///
/// ```swift
/// let provider = NetworkProvider(interceptor: auth, cache: MemoryResponseCache(maximumBytes: 20 * 1_024 * 1_024))
/// ```
public protocol ResponseCache: AnyObject, Sendable {
    /// The entry stored under `key`, or `nil`. A store that finds an entry it cannot read removes it and
    /// returns `nil`.
    func cachedResponse(for key: CacheKey) async -> CachedResponse?
    /// Stores `response` under `key`, replacing any entry there, and evicts what its bound requires
    /// (an entry larger than the whole bound is not stored).
    func store(_ response: CachedResponse, for key: CacheKey) async
    /// Removes the entry stored under `key`, if any.
    func removeResponse(for key: CacheKey) async
    /// Removes every entry of `partition` (an account's, from ``CacheKey/partition``), or, for `nil`,
    /// every entry of calls that needed no authentication.
    func removeAll(inPartition partition: String?) async
    /// Removes every entry.
    func removeAll() async
}

/// What a stored response is filed under: the account it belongs to, the method and the URL.
///
/// Keys hold no secret: a query item whose name a ``Redactor`` hides (`token`, `api_key`, …) appears
/// with the SHA-256 digest of its value instead of the value, and the account appears as a digest too.
public struct CacheKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The digest of the account the entry belongs to (see ``Credential/account``), or `nil` for an
    /// entry of a call that needed no authentication.
    public let partition: String?
    /// The request method: `GET` or `HEAD`.
    public let method: String
    /// The request URL, without its fragment, secret query values replaced by their digests.
    public let url: String

    /// Creates a key. The provider makes these; stores only compare and file them.
    public init(partition: String?, method: String, url: String) {
        self.partition = partition
        self.method = method
        self.url = url
    }

    /// The partition of an account: the SHA-256 digest of its identity, in hexadecimal.
    public static func partition(forAccount account: String) -> String {
        SHA256.hex(account)
    }

    /// `method url`, with the partition when there is one: e.g. `GET https://api.example.com/v1/users/1`.
    public var description: String {
        (partition.map { "[\($0.prefix(12))] " } ?? "") + "\(method) \(url)"
    }
}

/// A stored response: what the server sent (status, headers, body) and when, with the request header
/// values its `Vary` names.
///
/// The stored headers never include `Set-Cookie` or any header a default ``Redactor`` would hide; the
/// body is stored as it arrived.
public struct CachedResponse: Sendable, Codable, Equatable {
    /// The URL the response came from, secret query values replaced as in ``CacheKey/url``.
    public var url: URL
    /// The status code.
    public var statusCode: Int
    /// The response headers as stored (updated by each `304 Not Modified`).
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// When the request that got this response was sent (RFC 9111's `request_time`).
    public var requestDate: Date
    /// When the response arrived (RFC 9111's `response_time`), or was last revalidated.
    public var responseDate: Date
    /// For each request header the response's `Vary` names (lowercased), the value the request sent, or
    /// `nil` when it sent none; a value a ``Redactor`` would hide is kept as its digest. A later request
    /// is answered from this entry only when it sends the same values.
    public var variantHeaders: [String: String?]
    /// Until when ``CachePolicy/keepForOffline(upTo:)`` keeps this entry for when the server cannot answer,
    /// or `nil` for an entry stored by the HTTP rules alone. Past it the entry never answers and is removed.
    /// A kept entry whose response the HTTP rules would not have stored (`no-store`, no validator and no
    /// freshness) answers only a `keepForOffline` call whose server cannot answer.
    public var keptUntil: Date?

    /// Creates a stored response.
    public init(
        url: URL, statusCode: Int, headers: [String: String], body: Data, requestDate: Date, responseDate: Date,
        variantHeaders: [String: String?] = [:]
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.requestDate = requestDate
        self.responseDate = responseDate
        self.variantHeaders = variantHeaders
    }

    /// About how many bytes the entry takes: its body, headers and URL. Stores bound their size with it.
    public var cost: Int {
        headers.reduce(body.count + url.absoluteString.utf8.count + 64) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            + variantHeaders.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.utf8.count ?? 0) }
    }
}
