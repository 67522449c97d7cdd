import Foundation

/// An endpoint whose token must be a given account's: ``AuthInterceptor`` checks it where it attaches the
/// token, and throws ``OutboxError/accountChanged(expected:)`` instead of attaching another account's.
protocol AccountBoundEndpoint: Endpoint {
    /// The account (``Credential/account``) whose token the request may carry, or `nil` for any.
    var boundAccount: String? { get }
}

/// A stored mutation sent again through the provider's whole pipeline: the snapshot's URL, method, headers
/// and limits, its body from the record or the outbox's folder, its idempotency key, bound to its account.
struct OutboxDeliveryEndpoint: AccountBoundEndpoint {
    let baseURL: URL
    let method: HTTPMethod
    let headers: [String: String]
    let body: RequestBody
    let timeout: TimeInterval?
    let deadline: TimeInterval?
    let maximumResponseSize: Int?
    let acceptableStatusCodes: Set<Int>
    let requiresAuthentication: Bool
    let boundAccount: String?
    /// Offline, the attempt waits for the network within its deadline (the outbox waits before it starts).
    var offlineBehavior: OfflineBehavior? { .wait }

    /// The endpoint of `record` (read whole from disk), its body file in `store`, its key in `keyHeader`.
    init(_ record: OutboxRecord, store: OutboxStore, keyHeader: String) throws {
        guard let url = URL(string: record.url) else { throw OutboxError.invalidMutation("the stored URL does not parse") }
        baseURL = url
        method = HTTPMethod(rawValue: record.method)
        var headers = record.headers
        HeaderFields.set(record.idempotencyKey, for: keyHeader, in: &headers)
        self.headers = headers
        let contentType = HeaderFields.value(of: "Content-Type", in: headers) ?? "application/octet-stream"
        switch record.body {
        case .none: body = .none
        case .inline(let data): body = .data(data, contentType: contentType)
        case .file(let name, _): body = .file(URL(fileURLWithPath: store.bodyPath(name)), contentType: contentType)
        }
        timeout = record.timeout
        deadline = record.deadline
        maximumResponseSize = record.maximumResponseSize
        acceptableStatusCodes = StatusCodes.set(of: record.acceptableStatusCodes)
        requiresAuthentication = record.requiresAuthentication
        boundAccount = record.account
    }
}
