import Foundation

/// The origin of the URL asked about last, by its scheme and authority as written (`https://api.example.com:443`:
/// the same text is the same origin): a run of requests to one host makes its origin once. Reading a URL's
/// scheme, host and port cost ~2.7k instructions, and the slots and an ``AuthInterceptor``'s scope checks ask
/// several times a call.
final class RecentOrigin: @unchecked Sendable {
    // @unchecked: `last` is guarded by `lock`.
    private let lock = NSLock()
    private var last: (authority: [UInt8], origin: Origin)?

    /// The origin of `url`: the last one made when `url` has the same scheme and authority as written, else
    /// made as ``Origin/init(_:)`` makes it (and kept).
    func origin(of url: URL) -> Origin {
        var text = url.absoluteString
        lock.lock()
        let kept = last
        lock.unlock()
        let (length, same) = text.withUTF8 { bytes -> (Int, Bool) in
            let length = Self.schemeAndAuthorityLength(of: bytes)
            guard length > 0, let kept, kept.authority.count == length else { return (length, false) }
            return (length, kept.authority.withUnsafeBufferPointer { stored in zip(stored, bytes).allSatisfy { $0 == $1 } })
        }
        if same, let kept { return kept.origin }
        let origin = Origin(url)
        guard length > 0 else { return origin }
        let authority = text.withUTF8 { Array($0.prefix(length)) }
        lock.lock()
        last = (authority, origin)
        lock.unlock()
        return origin
    }

    /// The length of `bytes` up to the end of its authority (`scheme://authority`), or 0 when it has none.
    private static func schemeAndAuthorityLength(of bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return 0 }
        var end = colon + 3
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        return end
    }
}
