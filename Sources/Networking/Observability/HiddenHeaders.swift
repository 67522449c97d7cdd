import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Header fields that stay on the wire but that a provider never shows: not to monitors (so not in
/// `NetworkLogger` output or the cURL of what they are given), not to retriers, and not in
/// `Response.request`. Each provider has its own set, read from its own session configuration when it is
/// made (the routing header of the test kit's URL protocol, see ``HeaderRoutedURLProtocol``): empty in an
/// app, and never a setting of the process.
package enum HiddenHeaders {
    /// Did hide the header `name` from every provider made afterwards, process-wide. It does nothing now:
    /// each provider hides the routing header of the URL protocol its own session sends through (see
    /// ``HeaderRoutedURLProtocol``). Kept for the API check; nothing calls it.
    @available(*, deprecated, message: "A provider hides the routing header of the URL protocol its session sends through (HeaderRoutedURLProtocol)")
    package static func hide(_ name: String) {}

    /// `request` without the header fields `names` (lower-cased), whatever their spelling; `request`
    /// itself, not copied, when it has none of them.
    static func removing(_ names: Set<String>, from request: URLRequest) -> URLRequest {
        guard var fields = request.allHTTPHeaderFields, fields.keys.contains(where: { isHidden($0, among: names) }) else {
            return request
        }
        fields = fields.filter { !isHidden($0.key, among: names) }
        var request = request
        request.allHTTPHeaderFields = fields   // one assignment (see HeaderFields), not a setValue per name
        return request
    }

    /// Whether header `name` is one of `names` (lower-cased), whatever its spelling: compared on UTF-8 bytes,
    /// without lower-casing a copy of every name of every request.
    private static func isHidden(_ name: String, among names: Set<String>) -> Bool {
        names.contains { HeaderFields.sameName($0, name) }
    }
}
