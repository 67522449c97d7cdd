import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProvider {
    /// Decodes `response`, the answer ``response(_:interceptor:)`` gave for `endpoint`, as `type`, by the
    /// rules ``request(_:as:interceptor:)`` decodes with: the endpoint's decoder, else the provider's; the
    /// payload of the endpoint's envelope, if any; `keyPath` read inside it; an empty body as
    /// ``EmptyResponse`` or `nil`. For a value together with what its body does not say, such as a header:
    ///
    /// ```swift
    /// let response = try await provider.response(Users(page: 2))
    /// let users = try provider.decode(response, as: [User].self, for: Users(page: 2))
    /// let total = response.httpResponse.value(forHTTPHeaderField: "X-Total-Count")
    /// ```
    ///
    /// - Throws: ``NetworkError/decodingFailed(type:error:)`` when the body is not `type` (at `keyPath`).
    public func decode<T: Decodable>(_ response: Response, as type: T.Type, for endpoint: some Endpoint, atKeyPath keyPath: String? = nil)
        throws -> T
    {
        try decodePayload(response, as: type, for: endpoint, atKeyPath: keyPath)
    }
}
