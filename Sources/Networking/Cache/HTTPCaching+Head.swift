import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPCaching {
    /// Whether a `200` to `HEAD` describes the representation `stored` (a `GET` response) holds, so that
    /// its header fields update the stored ones (RFC 9111 §4.3.5): `true` when it carries at least one of
    /// `ETag`, `Last-Modified` and `Content-Length`, and each it carries has the stored value (the stored
    /// `Content-Length`, else the stored body's length when it was not decoded from a `Content-Encoding`);
    /// `false` when one differs (the stored response is to be taken as stale); `nil` when it carries none
    /// of them, and so tells nothing about the stored response (the conservative reading of §4.3.5: it
    /// neither updates nor removes it).
    static func headDescribes(_ head: HTTPURLResponse, stored: CachedResponse) -> Bool? {
        var compared = false
        for name in ["ETag", "Last-Modified"] {
            guard let received = head.value(forHTTPHeaderField: name) else { continue }
            guard let kept = HeaderFields.value(of: name, in: stored.headers),
                kept.trimmingCharacters(in: .whitespaces) == received.trimmingCharacters(in: .whitespaces)
            else { return false }
            compared = true
        }
        guard let length = head.value(forHTTPHeaderField: "Content-Length") else { return compared ? true : nil }
        let storedLength =
            HeaderFields.value(of: "Content-Length", in: stored.headers).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            ?? (HeaderFields.value(of: "Content-Encoding", in: stored.headers) == nil ? stored.body.count : nil)
        return storedLength != nil && Int(length.trimmingCharacters(in: .whitespaces)) == storedLength
    }

    /// Whether `response`'s `Vary` is `*` as the cache reads it (``varyNames(in:)``: also a member that is no
    /// field name, or too many names): it may not be selected for any later request (RFC 9111 §4.1).
    static func variesOnEverything(_ response: HTTPURLResponse) -> Bool {
        guard let vary = response.value(forHTTPHeaderField: "Vary") else { return false }
        return varyNames(in: ["Vary": vary]) == ["*"]
    }
}
