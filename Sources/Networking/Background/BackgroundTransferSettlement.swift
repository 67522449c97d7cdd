import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An outcome as a ``BackgroundTransferService`` keeps it in its transfer's record until the app
/// acknowledges it (``BackgroundTransferService/acknowledge(_:)``), to hand it out again at the next
/// launch when the process ends first.
///
/// It holds no secret: response header fields a ``Redactor`` hides (`Set-Cookie`, `Authorization`…) are
/// not kept. An error is kept by its kind and code: one of an underlying error the package cannot write
/// (a file system error) comes back as a generic one of the same case.
package enum BackgroundTransferSettlement: Codable, Sendable, Equatable {
    case finished(statusCode: Int, headers: [String: String], body: Data, file: URL?)
    case unauthorized(statusCode: Int, credentialRefreshedSince: Bool)
    case lost
    case cancelled
    case validatorMismatch(expected: String, received: String?)
    case accountChanged
    case redirectedToAnotherOrigin(String)
    /// A ``NetworkError`` by its case name and its code (a status, a `URLError` code, a limit).
    case network(kind: String, code: Int)

    init(_ outcome: BackgroundTransferOutcome) {
        switch outcome {
        case .finished(_, let response):
            let redactor = Redactor()
            self = .finished(
                statusCode: response.statusCode, headers: response.headers.filter { !redactor.hidesHeader($0.key) }, body: response.body,
                file: response.file)
        case .failed(_, let error):
            self.init(error)
        case .unreadableRecord:
            self = .lost   // never kept: an unreadable record has no record to keep it in
        }
    }

    private init(_ error: BackgroundTransferError) {
        switch error {
        case let .unauthorized(status, refreshed): self = .unauthorized(statusCode: status, credentialRefreshedSince: refreshed)
        case .lost: self = .lost
        case .cancelled: self = .cancelled
        case let .validatorMismatch(expected, received): self = .validatorMismatch(expected: expected, received: received)
        case .accountChanged: self = .accountChanged
        case .redirectedToAnotherOrigin(let origin): self = .redirectedToAnotherOrigin(origin.description)
        case .network(let error): self = Self.network(error)
        }
    }

    private static func network(_ error: NetworkError) -> Self {
        switch error {
        case .transportFailed(let error): return .network(kind: "transportFailed", code: error.code.rawValue)
        case .invalidStatusCode(let status): return .network(kind: "invalidStatusCode", code: status)
        case .redirectWouldForwardBody(let status): return .network(kind: "redirectWouldForwardBody", code: status)
        case .insecureRedirect(let status): return .network(kind: "insecureRedirect", code: status)
        case .responseTooLarge(let limit): return .network(kind: "responseTooLarge", code: limit)
        case .fileWriteFailed: return .network(kind: "fileWriteFailed", code: 0)
        default: return .network(kind: "transportFailed", code: URLError.Code.unknown.rawValue)
        }
    }

    /// The outcome of `record` this settlement keeps.
    func outcome(of record: BackgroundTransferRecord) -> BackgroundTransferOutcome {
        switch self {
        case let .finished(status, headers, body, file):
            return .finished(record, BackgroundTransferResponse(statusCode: status, headers: headers, body: body, file: file))
        case let .unauthorized(status, refreshed): return .failed(record, .unauthorized(statusCode: status, credentialRefreshedSince: refreshed))
        case .lost: return .failed(record, .lost)
        case .cancelled: return .failed(record, .cancelled)
        case let .validatorMismatch(expected, received): return .failed(record, .validatorMismatch(expected: expected, received: received))
        case .accountChanged: return .failed(record, .accountChanged)
        case .redirectedToAnotherOrigin(let origin):
            return .failed(record, URL(string: origin).map { .redirectedToAnotherOrigin(Origin($0)) } ?? .lost)
        case let .network(kind, code): return .failed(record, .network(Self.networkError(kind: kind, code: code)))
        }
    }

    private static func networkError(kind: String, code: Int) -> NetworkError {
        switch kind {
        case "invalidStatusCode": return .invalidStatusCode(code)
        case "redirectWouldForwardBody": return .redirectWouldForwardBody(statusCode: code)
        case "insecureRedirect": return .insecureRedirect(statusCode: code)
        case "responseTooLarge": return .responseTooLarge(limit: code)
        case "fileWriteFailed": return .fileWriteFailed(CocoaError(.fileWriteUnknown))
        default:
            let urlCode: URLError.Code? = URLError.Code(rawValue: code)   // failable on Linux only
            return .transportFailed(URLError(urlCode ?? .unknown))
        }
    }
}
