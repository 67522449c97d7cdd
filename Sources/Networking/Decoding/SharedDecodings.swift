import Foundation

/// The values decoded from the answer of one exchange that several identical calls shared (see
/// ``CallGroups``), so that callers who decode it as the same type with the same decoder decode it once.
///
/// Each caller still gets its own ``Response`` and asks for its own value: the first caller to decode the
/// body as `T` with a given `JSONDecoder` instance runs the decoder, and the others of the exchange that ask
/// for `T` from that same decoder get a copy of that value. A caller with another decoder, another type, a
/// key path or an envelope decodes the body itself. Only values that hold no object are shared: a class, or a
/// value with an object anywhere in it (an array of class instances, an optional one, a struct with one, as its
/// `Mirror` shows them), decodes once per caller, so no two callers ever hold one instance they did not make.
/// A decoding that fails is not kept: each caller then meets its own error.
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
    /// Each value with the decoder that made it, held so that its address names no other decoder meanwhile.
    private var values: [Key: (decoder: JSONDecoder, value: Any)] = [:]

    /// Whether values of `type` may be shared between callers: a value type that reads no key path from
    /// its task (see ``KeyPathDecodable``).
    static func shares<T>(_ type: T.Type) -> Bool {
        !(type is AnyObject.Type) && !(type is any KeyPathDecodable.Type)
    }

    /// The value decoded as `type` with `decoder`, if a caller kept one.
    func value<T>(of type: T.Type, decodedBy decoder: JSONDecoder) -> T? {
        lock.lock()
        defer { lock.unlock() }
        guard let kept = values[Key(type: ObjectIdentifier(type), decoder: ObjectIdentifier(decoder))], kept.decoder === decoder else { return nil }
        return kept.value as? T
    }

    /// Keeps `value`, decoded with `decoder`, for the other callers (the first kept stays), unless it holds
    /// an object (``holdsNoObject(_:depth:)``).
    func keep<T>(_ value: T, decodedBy decoder: JSONDecoder) {
        guard Self.holdsNoObject(value) else { return }
        let key = Key(type: ObjectIdentifier(T.self), decoder: ObjectIdentifier(decoder))
        lock.lock()
        if values[key] == nil { values[key] = (decoder, value) }
        lock.unlock()
    }

    /// Whether no class instance is reachable from `value` through its `Mirror` (stored properties, elements,
    /// payloads, optionals); `false` past 64 levels. Run once per shared answer, by the caller that decodes it
    /// first.
    static func holdsNoObject(_ value: Any, depth: Int = 0) -> Bool {
        guard depth < 64 else { return false }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .class { return false }
        for child in mirror.children where !holdsNoObject(child.value, depth: depth + 1) { return false }
        return true
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
