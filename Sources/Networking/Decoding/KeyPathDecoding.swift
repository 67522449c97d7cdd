import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension NetworkProviding {
    /// Sends `endpoint` and decodes the value at `keyPath` in its JSON body as `type`, as Moya's
    /// `map(_:atKeyPath:)` does: the envelope around it needs no type of its own.
    ///
    /// ```swift
    /// // {"status": 200, "data": {"user": {"id": 7, "name": "Lee"}, "items": [...]}}
    /// let user = try await provider.request(UserAPI.me, as: User.self, atKeyPath: "data.user")
    /// let items = try await provider.request(ItemAPI.list, as: [Item].self, atKeyPath: "data.items")
    /// ```
    ///
    /// - Keys are separated by dots and name object members (an array element cannot be named; a key
    ///   that contains a dot cannot be reached). An empty key path decodes the whole body.
    /// - The body is decoded by the same decoder as ``request(_:as:interceptor:)`` (the endpoint's
    ///   ``Endpoint/decoder``, else the provider's), in one pass, so its strategies apply: dates, data,
    ///   and the key decoding strategy, which applies to the key path, too. With
    ///   `.convertFromSnakeCase` write the converted names: `"data.userProfile"` for `data.user_profile`.
    /// - A missing key, or a value on the path that is not an object, fails with
    ///   ``NetworkError/decodingFailed(type:error:)`` whose type names the key path and whose description
    ///   names the coding path, never a value. A `null` at the end of the path decodes as `nil` into an
    ///   `Optional` type; a missing key does not.
    /// - A response with no body decodes as it does without a key path: ``EmptyResponse``, or `nil` for an
    ///   `Optional` type (see ``EmptyBodyDecodable``).
    /// - A fake of your own serves key-path calls by implementing
    ///   ``NetworkProviding/request(_:as:atKeyPath:interceptor:)``; without it, the default decodes
    ///   through the fake's ``NetworkProviding/request(_:as:interceptor:)`` in the calling task.
    ///
    /// - Parameters:
    ///   - endpoint: the call.
    ///   - type: what the value at `keyPath` decodes to.
    ///   - keyPath: the keys from the top of the body to the value, separated by dots: `"data.user"`.
    ///     An empty key (`"data..user"`, a leading or trailing dot) fails with
    ///     ``NetworkError/decodingFailed(type:error:)`` saying the key path is invalid.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String
    ) async throws -> T {
        try await request(endpoint, as: type, atKeyPath: keyPath, interceptor: nil)
    }

    /// The default implementation of the requirement: ``request(_:as:interceptor:)`` with a type of the
    /// package's own that decodes the value at the key path, which reaches it through a task-local value.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        interceptor: (any RequestInterceptor)?
    ) async throws -> T {
        try await DecodingKeyPath.$current.withValue(DecodingKeyPath(keyPath)) {
            try await request(endpoint, as: AtKeyPath<T>.self, interceptor: interceptor).value
        }
    }

    /// Sends `endpoint` and decodes the value at `keyPath` as `type`, with `adapter` run after the
    /// provider's own interceptor for this call only; see ``request(_:as:atKeyPath:interceptor:)``.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        adapter: any RequestAdapter
    ) async throws -> T {
        try await request(endpoint, as: type, atKeyPath: keyPath, interceptor: Interceptor(adapters: [adapter]))
    }

    /// Sends `endpoint` and decodes the value at `keyPath` as `type`, with `retrier` asked after the
    /// provider's own interceptor for this call only; see ``request(_:as:atKeyPath:interceptor:)``.
    public func request<T: Decodable>(
        _ endpoint: some Endpoint,
        as type: T.Type,
        atKeyPath keyPath: String,
        retrier: any RequestRetrier
    ) async throws -> T {
        try await request(endpoint, as: type, atKeyPath: keyPath, interceptor: Interceptor(retriers: [retrier]))
    }
}

/// The key path a call decodes at, handed to ``AtKeyPath`` through the calling task.
struct DecodingKeyPath: Sendable {
    /// The key path of the decoding in this task, if it is one.
    @TaskLocal static var current: DecodingKeyPath?

    /// The path as the caller wrote it, for error messages.
    let text: String
    /// Its keys, top first; none for an empty path.
    let keys: [String]
    /// Whether the path ends at an envelope's payload itself (the caller gave no key path inside it), which an
    /// ``EmptyBodyDecodable`` type reads as its empty value when it is missing or `null` (a success that
    /// carries nothing). A key the caller named is never lenient: a missing one fails.
    let isEnvelopePayload: Bool

    init(_ text: String) {
        self.text = text
        self.keys = text.isEmpty ? [] : text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self.isEnvelopePayload = false
    }

    /// The caller's key path `text` inside an envelope's payload at `payloadKeyPath` (an empty `text`: the
    /// payload itself, as an empty key path is the whole body without an envelope).
    init(_ text: String, inPayloadAt payloadKeyPath: String) {
        self.text = [payloadKeyPath, text].filter { !$0.isEmpty }.joined(separator: ".")
        self.keys = self.text.isEmpty ? [] : self.text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self.isEnvelopePayload = text.isEmpty && !payloadKeyPath.isEmpty
    }
}

/// What a decoding error calls a type: the caller's type and key path instead of the wrapper's name.
protocol KeyPathDecodable {
    /// E.g. `User at key path "data.user"`.
    static var decodedTypeName: String { get }
}

/// Decodes the value at the task's ``DecodingKeyPath`` as `Value`, walking nested containers with the
/// decoder it is given, so the decoder's strategies apply.
struct AtKeyPath<Value: Decodable>: Decodable, KeyPathDecodable {
    let value: Value

    init(value: Value) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        guard let path = DecodingKeyPath.current else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "No key path is set in this task."))
        }
        guard !path.keys.contains("") else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "The key path has an empty key (two dots, or a dot at an end)."))
        }
        guard let last = path.keys.last else {
            // Through a container, not `Value(from:)`: the decoder's date and data strategies apply.
            value = try decoder.singleValueContainer().decode(Value.self)
            return
        }
        var container = try decoder.container(keyedBy: AnyKey.self)
        for key in path.keys.dropLast() {
            container = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(key))
        }
        if path.isEnvelopePayload, let empty = (Value.self as? any EmptyBodyDecodable.Type)?.emptyBodyValue as? Value,
            try !container.contains(AnyKey(last)) || container.decodeNil(forKey: AnyKey(last))
        {
            value = empty   // a success envelope without a payload, for a type that needs none
            return
        }
        value = try container.decode(Value.self, forKey: AnyKey(last))
    }

    static var decodedTypeName: String {
        let path = DecodingKeyPath.current
        let invalid = path?.keys.contains("") == true ? " (invalid: it has an empty key)" : ""
        return "\(Value.self) at key path \"\(path?.text ?? "")\"\(invalid)"
    }
}

extension AtKeyPath: EmptyBodyDecodable where Value: EmptyBodyDecodable {
    static var emptyBodyValue: AtKeyPath<Value> { AtKeyPath(value: Value.emptyBodyValue) }
}

/// A key named at run time.
private struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ stringValue: String) {
        self.stringValue = stringValue
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        return nil
    }
}
