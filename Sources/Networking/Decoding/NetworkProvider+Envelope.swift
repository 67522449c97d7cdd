import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// How the provider reads the app's envelope (see EnvelopeFormat): while it validates each attempt, so that
// the retriers and the AuthInterceptor see a failure inside a 200 before the caller does, and again when the
// payload is decoded.

extension NetworkProvider {
    /// The envelope `endpoint`'s answers are wrapped in: its own, else the provider's; `nil` for none.
    func envelopeFormat(for endpoint: some Endpoint) -> EnvelopeFormat? {
        guard let format = endpoint.envelope ?? envelope, !format.isUnwrapped else { return nil }
        return format
    }

    /// The failure `response`'s envelope reports, or `nil` (a success, no envelope, no body to read).
    ///
    /// - An acceptable answer whose body is not the envelope throws ``NetworkError/decodingFailed(type:error:)``
    ///   naming the envelope and the field: never a success.
    /// - An unacceptable answer whose body is not an envelope (a proxy's page) reports nothing: the status
    ///   decides, as without an envelope.
    /// - An acceptable answer that is no 2xx (a 3xx the endpoint accepts unfollowed, its HTML page) is not read.
    /// - A `206` is not read: its body is a part of the representation (RFC 9110 §15.3.7), as the cache's own
    ///   `206` answers are.
    func envelopeFailure(of response: Response, for endpoint: some Endpoint, acceptable: Bool) throws -> EnvelopeFailure? {
        guard let format = envelopeFormat(for: endpoint), let read = format.read, !response.hasNoBody, response.statusCode != 206,
            !acceptable || StatusCodes.success.contains(response.statusCode)
        else { return nil }
        do {
            return try read(response.data, endpoint.decoder ?? decoder, response.statusCode)
        } catch let error as DecodingError {
            guard acceptable else { return nil }
            throw NetworkError.decodingFailed(type: format.name, error: error)
        } catch {
            guard acceptable else { return nil }
            let context = DecodingError.Context(codingPath: [], debugDescription: "The envelope could not be read.", underlyingError: error)
            throw NetworkError.decodingFailed(type: format.name, error: .dataCorrupted(context))
        }
    }

    /// Whether a stored `entry` may answer (or be revalidated for) `endpoint`: always without an envelope, so
    /// that a cache hit costs nothing more. With one, only an entry whose body is an envelope reporting a
    /// success, or that has no body: one stored before the app declared its envelope, or by an
    /// ``EnvelopeFormat/unwrapped`` endpoint at the same URL (a failure, or no envelope at all), is removed
    /// from `cache` and the call is a miss (RFC 9111 §4: a cache may always choose to ask the server).
    func storedEntryFitsEnvelope(_ entry: CachedResponse, method: String, for endpoint: some Endpoint, key: CacheKey, cache: any ResponseCache) async -> Bool {
        guard let format = envelopeFormat(for: endpoint), let read = format.read, method != HTTPMethod.head.rawValue,
            entry.statusCode != 204, entry.statusCode != 205, StatusCodes.success.contains(entry.statusCode),
            entry.body.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D })   // as Response.hasNoBody
        else { return true }
        do {
            if try read(entry.body, endpoint.decoder ?? decoder, entry.statusCode) == nil { return true }
        } catch {
            // not an envelope: a miss, as a failure is
        }
        await cache.removeResponse(for: key)
        return false
    }

    /// The value the caller asked for: the body (at `keyPath`, if given) decoded as `type` with the endpoint's
    /// decoder, else the provider's; inside the envelope's payload when `endpoint` has an envelope. A missing or
    /// `null` payload decodes only as an ``EmptyBodyDecodable`` type (``EmptyResponse``, an `Optional`), and only
    /// without a key path: a key missing under the caller's key path fails, as it does without an envelope.
    func decodePayload<T: Decodable>(_ response: Response, as type: T.Type, for endpoint: some Endpoint, atKeyPath keyPath: String? = nil) throws -> T {
        guard let format = envelopeFormat(for: endpoint), !response.hasNoBody else {
            guard let keyPath else { return try decodeSharing(response, as: type, decoder: endpoint.decoder) }
            return try DecodingKeyPath.$current.withValue(DecodingKeyPath(keyPath)) {   // only while decoding
                try decode(response, as: AtKeyPath<T>.self, decoder: endpoint.decoder).value
            }
        }
        // A key-path call through an app's wrapper (the protocol's default): `T` is the package's own type that
        // reads the caller's key path from the task. That path is read inside the payload, once.
        if keyPath == nil, T.self is any KeyPathDecodable.Type, let caller = DecodingKeyPath.current {
            return try DecodingKeyPath.$current.withValue(DecodingKeyPath(caller.text, inPayloadAt: format.payloadKeyPath)) {
                try decode(response, as: type, decoder: endpoint.decoder)
            }
        }
        return try DecodingKeyPath.$current.withValue(DecodingKeyPath(keyPath ?? "", inPayloadAt: format.payloadKeyPath)) {
            try decode(response, as: AtKeyPath<T>.self, decoder: endpoint.decoder).value
        }
    }
}
