import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkError {
    /// `-1005 (.networkConnectionLost)`: a transport failure's code, with the name an app switches on
    /// (`error.code == .networkConnectionLost`) when it is a common one; the number alone otherwise. Never the
    /// error's `userInfo`, which holds the failing URL and its query.
    static func transportSummary(of error: URLError) -> String {
        guard let name = commonNames[error.code] else { return "\(error.code.rawValue)" }
        return "\(error.code.rawValue) (.\(name))"
    }

    /// The codes a call over HTTP meets, by their `URLError.Code` names.
    private static let commonNames: [URLError.Code: String] = [
        .unknown: "unknown",
        .cancelled: "cancelled",
        .badURL: "badURL",
        .timedOut: "timedOut",
        .unsupportedURL: "unsupportedURL",
        .cannotFindHost: "cannotFindHost",
        .cannotConnectToHost: "cannotConnectToHost",
        .networkConnectionLost: "networkConnectionLost",
        .dnsLookupFailed: "dnsLookupFailed",
        .httpTooManyRedirects: "httpTooManyRedirects",
        .resourceUnavailable: "resourceUnavailable",
        .notConnectedToInternet: "notConnectedToInternet",
        .redirectToNonExistentLocation: "redirectToNonExistentLocation",
        .badServerResponse: "badServerResponse",
        .userAuthenticationRequired: "userAuthenticationRequired",
        .zeroByteResource: "zeroByteResource",
        .cannotDecodeRawData: "cannotDecodeRawData",
        .cannotDecodeContentData: "cannotDecodeContentData",
        .cannotParseResponse: "cannotParseResponse",
        .internationalRoamingOff: "internationalRoamingOff",
        .dataNotAllowed: "dataNotAllowed",
        .dataLengthExceedsMaximum: "dataLengthExceedsMaximum",
        .secureConnectionFailed: "secureConnectionFailed",
        .serverCertificateHasBadDate: "serverCertificateHasBadDate",
        .serverCertificateUntrusted: "serverCertificateUntrusted",
        .serverCertificateHasUnknownRoot: "serverCertificateHasUnknownRoot",
        .serverCertificateNotYetValid: "serverCertificateNotYetValid",
        .clientCertificateRejected: "clientCertificateRejected",
        .clientCertificateRequired: "clientCertificateRequired",
        .appTransportSecurityRequiresSecureConnection: "appTransportSecurityRequiresSecureConnection",
    ]
}
