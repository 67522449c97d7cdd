import Foundation

/// The values decoded from the answer of one exchange that several identical calls shared (see
/// ``CallGroups``), so that callers who decode it as the same type with the same decoder decode it once.
///
/// Each caller still gets its own ``Response`` and asks for its own value: the first caller to decode the
/// body as `T` with a given `JSONDecoder` instance runs the decoder, and the others of the exchange that ask
/// for `T` from that same decoder get a copy of that value. A caller with another decoder, another type, a
/// key path or an envelope decodes the body itself. Only value types are shared: a class decodes once per
/// caller, so no two callers ever hold one instance they did not make. A decoding that fails is not kept:
/// each caller then meets its own error.
///
/// A custom `init(from:)` therefore runs once for the exchange, not once per caller; its result is the
/// same for every caller, since they decode the same bytes with the same decoder.
final class SharedDecodings: @unchecked Sendable {
    // @unchecked: `values` is guarded by `lock`; a value is a value type, copied out under it.
    private struct Key: Hashable {
        let type: ObjectIdentifier
        let decoder: ObjectIdentifier
    }

    private let lock = NSLock()
    private var values: [Key: Any] = [:]

    /// Whether values of `type` may be shared between callers: a value type that reads no key path from
    /// its task (see ``KeyPathDecodable``).
    static func shares<T>(_ type: T.Type) -> Bool {
        !(type is AnyObject.Type) && !(type is any KeyPathDecodable.Type)
    }

    /// The value decoded as `type` with `decoder`, if a caller kept one.
    func value<T>(of type: T.Type, decodedBy decoder: JSONDecoder) -> T? {
        lock.lock()
        defer { lock.unlock() }
        return values[Key(type: ObjectIdentifier(type), decoder: ObjectIdentifier(decoder))] as? T
    }

    /// Keeps `value`, decoded with `decoder`, for the other callers (the first kept stays).
    func keep<T>(_ value: T, decodedBy decoder: JSONDecoder) {
        let key = Key(type: ObjectIdentifier(T.self), decoder: ObjectIdentifier(decoder))
        lock.lock()
        if values[key] == nil { values[key] = value }
        lock.unlock()
    }
}

extension NetworkProvider {
    /// ``decode(_:as:decoder:)``, through the values the callers of a shared exchange decoded (see
    /// ``SharedDecodings``) when `response` is the answer of one.
    func decodeSharing<T: Decodable>(_ response: Response, as type: T.Type, decoder: JSONDecoder?) throws -> T {
        guard let shared = response.sharedDecodings, SharedDecodings.shares(type) else {
            return try decode(response, as: type, decoder: decoder)
        }
        let decoder = decoder ?? self.decoder
        if let value = shared.value(of: type, decodedBy: decoder) { return value }
        let value = try decode(response, as: type, decoder: decoder)
        shared.keep(value, decodedBy: decoder)
        return value
    }
}
