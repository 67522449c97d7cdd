import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which response headers a stored entry keeps (RFC 9111 §3.1, §3.2): all but cookies, the hop-by-hop
/// fields, the proxy's, and the fields a `Connection` lists, unless those are end-to-end fields.
extension HTTPCaching {
    /// Response headers never stored nor replayed: cookies (secrets, and the session's cookie store took
    /// them when they arrived), the hop-by-hop fields (RFC 9111 §3.1, RFC 9110 §7.6.1; `Trailer` was one
    /// in RFC 2616 §13.5.1 and announces trailer fields, RFC 9110 §6.6.2, that a stored body never has)
    /// and the proxy's authentication (RFC 9110 §11.7: for the next hop only).
    private static let unstoredHeaders: Set<String> = [
        "set-cookie", "set-cookie2", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te",
        "trailer", "proxy-authenticate", "proxy-authorization", "proxy-authentication-info",
    ]
    /// End-to-end fields kept even when a `Connection` lists them: RFC 9110 §7.6.1 forbids a sender to
    /// list a field meant for every recipient, so such a listing is a mistake, and dropping the field
    /// would change what the response means to the cache (a hidden `no-store`, `Expires` or `Vary`).
    /// Every `Content-…` field counts too (``isStored(_:listed:)``).
    private static let endToEndHeaders: Set<String> = [
        "cache-control", "pragma", "expires", "age", "date", "vary", "etag", "last-modified", "location", "retry-after", "warning",
        "accept-ranges", "allow",
    ]
    /// Headers a 304 does not update (RFC 9111 §3.2): the stored body's own description.
    static let keptOn304: Set<String> = ["content-length", "content-encoding", "content-range", "content-type"]

    /// Whether a response header (`name` lowercased) is stored, `listed` the names its `Connection` lists.
    static func isStored(_ name: String, listed: Set<String>) -> Bool {
        guard !unstoredHeaders.contains(name) else { return false }
        return !listed.contains(name) || endToEndHeaders.contains(name) || name.hasPrefix("content-")
    }

    /// The response's headers as stored: without cookies, hop-by-hop fields, the fields its `Connection`
    /// lists (but end-to-end ones), and any header a default ``Redactor`` hides (a token a server echoes).
    static func storedHeaders(of response: HTTPURLResponse) -> [String: String] {
        let redactor = Redactor()
        let listed = connectionOptions(of: response)
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            let name = "\(name)"
            guard isStored(name.lowercased(), listed: listed), !redactor.hidesHeader(name) else { continue }
            headers[name] = storedValue("\(value)", of: name)
        }
        return headers
    }

    /// The lowercased names the `Connection` fields of `response` list (any spelling, every line): fields
    /// for this connection only, never forwarded (RFC 9110 §7.6.1), so never stored (RFC 9111 §3.1).
    static func connectionOptions(of response: HTTPURLResponse) -> Set<String> {
        var options: Set<String> = []
        for (name, value) in response.allHeaderFields where HeaderFields.sameName("\(name)", "Connection") {
            for option in "\(value)".split(separator: ",") { options.insert(option.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
        return options
    }

    /// A header's value as stored: a URL-valued one (`Location`, `Content-Location`) with its secrets
    /// digested as in a key (a signed redirect must not reach the disk). One that `URL` cannot parse (an
    /// invalid host, or a space or `|` where Foundation does not encode them) yet may hold a query,
    /// fragment or user information is stored as the SHA-256 digest of the whole value.
    static func storedValue(_ value: String, of name: String) -> String {
        guard HeaderFields.sameName(name, "Location") || HeaderFields.sameName(name, "Content-Location"),
            value.contains(where: { $0 == "?" || $0 == "@" || $0 == "#" })
        else { return value }
        guard let url = URL(string: value) else { return "sha256:" + SHA256.hex(value) }
        return keyURL(url)
    }
}
