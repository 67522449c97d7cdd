import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPCaching {
    /// Whether a `200` to `HEAD` describes the representation `stored` (a `GET` response) holds, so that
    /// its header fields update the stored ones (RFC 9111 §4.3.5): each validator it carries (`ETag`,
    /// `Last-Modified`) has the stored value, and its `Content-Length`, if any, is the stored length (the
    /// stored `Content-Length`, else the stored body's when it was not decoded from a `Content-Encoding`).
    /// Otherwise the stored response is to be taken as stale.
    static func headDescribes(_ head: HTTPURLResponse, stored: CachedResponse) -> Bool {
        for name in ["ETag", "Last-Modified"] {
            guard let received = head.value(forHTTPHeaderField: name) else { continue }
            guard let kept = HeaderFields.value(of: name, in: stored.headers),
                kept.trimmingCharacters(in: .whitespaces) == received.trimmingCharacters(in: .whitespaces)
            else { return false }
        }
        guard let length = head.value(forHTTPHeaderField: "Content-Length") else { return true }
        let storedLength =
            HeaderFields.value(of: "Content-Length", in: stored.headers).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            ?? (HeaderFields.value(of: "Content-Encoding", in: stored.headers) == nil ? stored.body.count : nil)
        return storedLength != nil && Int(length.trimmingCharacters(in: .whitespaces)) == storedLength
    }
}
