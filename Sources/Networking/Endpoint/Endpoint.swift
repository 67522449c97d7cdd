import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One API call: where it goes and what it sends.
///
/// Conform a struct, or an enum with one case per call (as with Moya); only ``baseURL`` and ``path``
/// are required, everything else has a default.
///
/// ```swift
/// enum UserAPI: Endpoint {
///     case user(id: Int)
///     case search(String)
///
///     var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
///     var path: String {
///         switch self {
///         case .user(let id): return "/users/\(id)"
///         case .search: return "/users/search"
///         }
///     }
///     var queryItems: [URLQueryItem] {
///         guard case .search(let text) = self else { return [] }
///         return [URLQueryItem(name: "q", value: text)]
///     }
/// }
/// ```
public protocol Endpoint: Sendable {
    /// The API's base URL, e.g. `https://api.example.com/v1/`. A trailing slash is optional.
    var baseURL: URL { get }
    /// The path appended to ``baseURL``, unescaped (`/users/홍길동` is fine). Leading and trailing
    /// slashes are joined with the base URL's without doubling or dropping one. Default: `""`.
    var path: String { get }
    /// The method. Default: `.get`.
    var method: HTTPMethod { get }
    /// Header fields set on the request; they win over the `Content-Type` the body implies, except a
    /// ``RequestBody/multipart(_:)`` form's, whose boundary is part of it. Default: none.
    var headers: [String: String] { get }
    /// Query items appended after any query in ``baseURL``, names and values unescaped. Default: none.
    var queryItems: [URLQueryItem] { get }
    /// The body. Default: ``RequestBody/none``.
    var body: RequestBody { get }
    /// The request timeout in seconds, or `nil` for the session configuration's. Default: `nil`.
    /// It is rounded up to whole seconds on every platform, since URLSession on Linux truncates it (0.5 s
    /// would time out at once); set `timeoutIntervalForRequest` on a session in whole seconds too.
    /// A timeout longer than a day (`.infinity` included) is clamped to a day; zero, a negative value
    /// or NaN makes the call fail with ``NetworkError/invalidRequest(field:reason:)`` before sending.
    var timeout: TimeInterval? { get }
    /// The overall deadline of a call to this endpoint, in seconds, or `nil` for the provider's
    /// (``NetworkProvider/defaultDeadline``, 120 s, unless the provider was given another). It covers
    /// every attempt, retry delay and redirect: a retry whose delay would end after it is not waited
    /// for. `.infinity` means none; zero, a negative value or NaN fails the call with
    /// ``NetworkError/invalidRequest(field:reason:)``. Default: `nil`.
    var deadline: TimeInterval? { get }
    /// The largest response body a call to this endpoint accepts, in bytes, or `nil` for the provider's
    /// (``NetworkProvider/defaultMaximumResponseSize``, 64 MiB, unless the provider was given another).
    /// A larger body, or a larger declared `Content-Length`, fails the call with
    /// ``NetworkError/responseTooLarge(limit:)``: a declared length when the headers arrive, any other
    /// body (chunked, or decoded from gzip) as it arrives. For a download it is the file's limit (none
    /// unless the endpoint names one); for a stream, how far its reader may fall behind. Default: `nil`.
    var maximumResponseSize: Int? { get }
    /// The status codes that count as success; any other throws ``NetworkError/invalidStatusCode(_:)``.
    /// Default: `200..<300`.
    var acceptableStatusCodes: Set<Int> { get }
    /// Whether this call needs the user's credentials. Authentication interceptors attach no token to a
    /// call that returns `false` (sign-in, sign-up, token refresh) and never refresh because of it.
    /// Default: `true`.
    var requiresAuthentication: Bool { get }
    /// What a call to this endpoint does with a redirect, or `nil` for the provider's
    /// (``NetworkProvider/redirectBehavior``, ``RedirectBehavior/follow`` unless the provider was given
    /// another). Default: `nil`.
    var redirectBehavior: RedirectBehavior? { get }
    /// The decoder that ``NetworkProviding/request(_:as:interceptor:)`` (and the key-path variants)
    /// decode this endpoint's body with, or `nil` for the provider's (the `decoder:` it was created
    /// with). Default: `nil`.
    ///
    /// One endpoint with ISO-8601 dates needs no second provider:
    ///
    /// ```swift
    /// struct Events: Endpoint {
    ///     var baseURL: URL { URL(string: "https://api.example.com/v1/")! }
    ///     var path: String { "/events" }
    ///     var decoder: JSONDecoder? { Self.iso8601 }
    ///
    ///     private static let iso8601: JSONDecoder = {
    ///         let decoder = JSONDecoder()
    ///         decoder.dateDecodingStrategy = .iso8601
    ///         return decoder
    ///     }()
    /// }
    /// ```
    ///
    /// The decoder is used as it is, not copied: configure it once and do not change it while calls
    /// use it. Declare it as `JSONDecoder?`, as above: a property of type `JSONDecoder` (no `?`) does not
    /// satisfy this requirement, and Swift does not warn, so the provider's decoder would be used.
    var decoder: JSONDecoder? { get }
    /// How a call to this endpoint uses the provider's response cache, or `nil` for the provider's
    /// (``NetworkProvider/cachePolicy``, ``CachePolicy/http`` unless the provider was given another).
    /// Only matters when the provider has a cache. Default: `nil`.
    var cachePolicy: CachePolicy? { get }
    /// The envelope this endpoint's answers are wrapped in, or `nil` for the provider's
    /// (``NetworkProvider/envelope``, none unless the provider was given one); ``EnvelopeFormat/unwrapped``
    /// for an endpoint whose answers are not wrapped when the provider's are. Default: `nil`.
    ///
    /// ```swift
    /// var envelope: EnvelopeFormat? { EnvelopeFormat(APIEnvelope.self, payloadKeyPath: "result") }
    /// ```
    var envelope: EnvelopeFormat? { get }
    /// What the call does when the device is offline (see ``Connectivity``): wait for the network within
    /// its deadline, or fail at once with ``NetworkError/offline``; `nil` (the default) for the provider's
    /// ``NetworkProvider/offlineBehavior``.
    var offlineBehavior: OfflineBehavior? { get }
    /// How urgent the call is, when it waits for a free slot under the provider's ``Scheduling`` limits;
    /// passed on to the session task. Default: ``RequestPriority/normal``.
    var priority: RequestPriority { get }
    /// Whether this call may share one exchange with identical concurrent calls (only `GET` and `HEAD`
    /// without a body ever do); `nil` (the default) for the provider's
    /// ``Scheduling/coalescesIdenticalCalls``.
    var coalescesIdenticalCalls: Bool? { get }
}

extension Endpoint {
    /// The default: `""`, so requests go to ``Endpoint/baseURL`` itself.
    public var path: String { "" }
    /// The default: `.get`.
    public var method: HTTPMethod { .get }
    /// The default: no header fields.
    public var headers: [String: String] { [:] }
    /// The default: no query items.
    public var queryItems: [URLQueryItem] { [] }
    /// The default: ``RequestBody/none``.
    public var body: RequestBody { .none }
    /// The default: `nil`, so the session configuration's request timeout applies.
    public var timeout: TimeInterval? { nil }
    /// The default: `nil`, so the provider's ``NetworkProvider/deadline`` applies.
    public var deadline: TimeInterval? { nil }
    /// The default: `nil`, so the provider's ``NetworkProvider/maximumResponseSize`` applies.
    public var maximumResponseSize: Int? { nil }
    /// The default: `200..<300`.
    public var acceptableStatusCodes: Set<Int> { StatusCodes.success }
    /// The default: `true`, so authentication interceptors attach their token.
    public var requiresAuthentication: Bool { true }
    /// The default: `nil`, so the provider's ``NetworkProvider/redirectBehavior`` applies.
    public var redirectBehavior: RedirectBehavior? { nil }
    /// The default: `nil`, so the provider's decoder (the `decoder:` it was created with) applies.
    public var decoder: JSONDecoder? { nil }
    /// The default: `nil`, so the provider's ``NetworkProvider/cachePolicy`` applies.
    public var cachePolicy: CachePolicy? { nil }
    /// The default: `nil`, so the provider's ``NetworkProvider/envelope`` applies.
    public var envelope: EnvelopeFormat? { nil }
    /// The default: `nil`, so the provider's ``NetworkProvider/offlineBehavior`` applies.
    public var offlineBehavior: OfflineBehavior? { nil }
    /// The default: ``RequestPriority/normal``.
    public var priority: RequestPriority { .normal }
    /// The default: `nil`, so the provider's ``Scheduling/coalescesIdenticalCalls`` applies.
    public var coalescesIdenticalCalls: Bool? { nil }
}

/// The default acceptable status codes, built once rather than on every request.
enum StatusCodes {
    static let success = Set(200..<300)

    /// The set of `codes`: the shared ``success`` when they list exactly 200–299 in order (as an outbox record
    /// stores them), made once instead of once a call; any other list, a new set of its codes.
    static func set(of codes: [Int]) -> Set<Int> {
        codes == successSorted ? success : Set(codes)
    }

    private static let successSorted = Array(200..<300)
}
