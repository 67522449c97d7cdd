import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Whether a response's head frames its body in a way a client can trust (RFC 9112 §6.3).
enum ResponseFraming {
    /// Whether `response` declares its body's length with an invalid `Content-Length` that decides its framing:
    /// not a number, or a list of different numbers (two header lines that disagree, which URLSession joins as
    /// `77, 5`). RFC 9112 §6.3 (5): the user agent "MUST close the connection to the server and discard the
    /// received response". A list of one number repeated (`5, 5`) is that number (RFC 9110 §8.6). Not looked at
    /// where the field does not frame the body: a `Transfer-Encoding` overrides it, and an answer to `HEAD`, a
    /// 1xx, 204 or 304 has no body whatever it declares (RFC 9112 §6.3 (1) to (3)).
    static func hasInvalidContentLength(_ response: HTTPURLResponse, to request: URLRequest) -> Bool {
        // A single valid number is what URLSession parsed: the common case costs no header look-up.
        guard response.expectedContentLength < 0,
            let declared = response.value(forHTTPHeaderField: "Content-Length")
        else { return false }
        let status = response.statusCode
        guard status >= 200, status != 204, status != 304, request.httpMethod != "HEAD",
            response.value(forHTTPHeaderField: "Transfer-Encoding") == nil
        else { return false }
        let lengths = declared.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let first = lengths.first, !first.isEmpty, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return true
        }
        return lengths.contains { $0 != first }
    }
}
