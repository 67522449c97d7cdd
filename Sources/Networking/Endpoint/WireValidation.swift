import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Checks, before a request is sent, the parts the app controls that would corrupt the HTTP message:
/// a method that is not a token, a header name that is not a token, a header value with CR, LF, NUL or
/// another control character (request splitting). URLSession would send most of them verbatim.
///
/// The error names the field, never its value (a value may be a secret).
enum WireValidation {
    /// RFC 9110 `tchar`: the bytes of a method or header name.
    private static let tokenBytes = PercentEncoding.ByteSet("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    /// Throws ``NetworkError/invalidRequest(field:reason:)`` for the first part of `request` that
    /// cannot go on the wire as it is. (On Linux, `URLRequest.setValue(_:forHTTPHeaderField:)` itself
    /// drops a header whose value has CR or LF, so an adapter's such header is not sent at all.)
    static func check(_ request: URLRequest) throws {
        try check(method: request.httpMethod ?? "GET")
        try check(headers: request.allHTTPHeaderFields ?? [:])
    }

    /// Throws when `method` is not an HTTP token.
    static func check(method: String) throws {
        guard isToken(method) else {
            throw NetworkError.invalidRequest(
                field: "method", reason: "is not an HTTP token (RFC 9110): it is empty or has a space, separator or control character")
        }
    }

    /// Throws for the first header whose name is not a token or whose value has a control character.
    static func check(headers: [String: String]) throws {
        for (name, value) in headers {
            guard isToken(name) else {
                throw NetworkError.invalidRequest(field: "header name starting \"\(tokenPrefix(of: name))\"", reason: "is not an HTTP token (RFC 9110)")
            }
            guard isFieldValue(value) else {
                throw NetworkError.invalidRequest(field: "value of header \"\(name)\"", reason: "has CR, LF, NUL or another control character")
            }
        }
    }

    static func isToken(_ text: String) -> Bool {
        let tokenBytes = Self.tokenBytes
        var text = text   // `withUTF8`: the bytes in place, in a loop the optimizer sees whole
        return text.withUTF8 { bytes in !bytes.isEmpty && bytes.allSatisfy { tokenBytes.contains($0) } }
    }

    /// RFC 9110 field-value: visible ASCII, obs-text (bytes from 0x80), space and tab.
    static func isFieldValue(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in bytes.allSatisfy { $0 >= 0x20 ? $0 != 0x7F : $0 == 0x09 } }
    }

    /// The part of `name` before its first byte that is not a token byte, at most 64 bytes: enough to
    /// say which header it is, never what follows (`"Authorization: Bearer …"` gives `Authorization`).
    private static func tokenPrefix(of name: String) -> String {
        String(decoding: name.utf8.prefix { tokenBytes.contains($0) }.prefix(64), as: UTF8.self)
    }
}
