import Foundation
import Networking

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension MockAuthServer {
    /// How the app's token endpoint is called and how it answers, so that a ``MockAuthServer`` speaks the
    /// app's own token protocol: its path and method, where the refresh token goes, the answer's field names
    /// and nesting (e.g. an envelope), and what a rejected refresh looks like.
    ///
    /// ```swift
    /// // {"divisionCode":"S000","resultMsg":"OK","data":{"accessToken":…,"refreshToken":…,"expiresIn":…}}
    /// let api = MockAuthServer(tokenExchange: .init(
    ///     path: "auth/reissue", method: .post, refreshToken: .header("X-Refresh-Token"),
    ///     answer: .init(accessTokenField: "data.accessToken", refreshTokenField: "data.refreshToken",
    ///                   expiresInField: "data.expiresIn", fixedFields: ["divisionCode": "S000", "resultMsg": "OK"]),
    ///     rejection: .init(statusCode: 200, body: #"{"divisionCode":"E401","resultMsg":"EXPIRED"}"#)))
    /// ```
    ///
    /// The default, ``default``, is the server's own protocol: `POST auth/refresh` with
    /// `{"refreshToken": …}`, answered `{"accessToken", "refreshToken", "expiresIn"}`, rejected with 401
    /// `invalid_grant`.
    public struct TokenExchange: Sendable {
        /// The token endpoint's path under the server's base URL (`auth/refresh`; a leading `/` is ignored).
        public var path: String
        /// The token endpoint's method.
        public var method: HTTPMethod
        /// Where the app sends the refresh token.
        public var refreshToken: RefreshTokenPlacement
        /// How new tokens are written, by the token endpoint and the sign-in endpoint.
        public var answer: TokenAnswer
        /// What a rejected refresh gets: a refresh token that is not the current one, one that was already
        /// spent, or any after ``MockAuthServer/setRefreshAnswer(_:)`` with `.reject`.
        public var rejection: Rejection

        /// The server's own protocol (see ``TokenExchange``).
        public static let `default` = TokenExchange()

        /// Describes the app's token protocol; each part defaults to the server's own.
        public init(
            path: String = "auth/refresh",
            method: HTTPMethod = .post,
            refreshToken: RefreshTokenPlacement = .jsonField("refreshToken"),
            answer: TokenAnswer = TokenAnswer(),
            rejection: Rejection = .invalidGrant(statusCode: 401)
        ) {
            self.path = path
            self.method = method
            self.refreshToken = refreshToken
            self.answer = answer
            self.rejection = rejection
        }

        /// The endpoint's path as the server matches it, e.g. `/v1/auth/refresh`.
        func fullPath(under baseURL: URL) -> String {
            let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
            return baseURL.appendingPathComponent(relative).path
        }
    }

    /// Where the app sends the refresh token.
    public enum RefreshTokenPlacement: Sendable, Equatable {
        /// In a JSON body, in the field of that name; a dotted name (`data.refreshToken`) reads nested objects.
        case jsonField(String)
        /// In an `application/x-www-form-urlencoded` body, in the field of that name (OAuth 2.0's
        /// `refresh_token`, RFC 6749 §6).
        case formField(String)
        /// In the header of that name, after `prefix` (e.g. `"Bearer "`).
        case header(String, prefix: String = "")

        /// The refresh token `request` carries here, or `nil` when it carries none.
        func token(in request: RecordedRequest) -> String? {
            switch self {
            case .jsonField(let name):
                guard var value = try? JSONSerialization.jsonObject(with: request.body) else { return nil }
                for key in name.split(separator: ".") {
                    guard let object = value as? [String: Any], let next = object[String(key)] else { return nil }
                    value = next
                }
                return value as? String
            case .formField(let name):
                let form = String(decoding: request.body, as: UTF8.self)
                for pair in form.split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map {
                        $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
                    }
                    if parts.first == name { return parts.count > 1 ? parts[1] : "" }
                }
                return nil
            case .header(let name, let prefix):
                guard let value = request.header(name), value.hasPrefix(prefix) else { return nil }
                return String(value.dropFirst(prefix.count))
            }
        }
    }

    /// How new tokens are written in the answer: the field of each (a dotted name nests it in objects,
    /// `data.accessToken`), fields every answer carries (an envelope's status code and message), and the status.
    public struct TokenAnswer: Sendable {
        /// Where the access token goes.
        public var accessTokenField: String
        /// Where the refresh token goes.
        public var refreshTokenField: String
        /// Where the lifetime in seconds goes, when the server announces one; `nil`: never written.
        public var expiresInField: String?
        /// Fields written in every answer, by dotted name (e.g. `["divisionCode": "S000"]`).
        public var fixedFields: [String: String]
        /// The answer's status.
        public var statusCode: Int

        /// Describes the answer; each part defaults to the server's own (`{"accessToken", "refreshToken", "expiresIn"}`, 200).
        public init(
            accessTokenField: String = "accessToken",
            refreshTokenField: String = "refreshToken",
            expiresInField: String? = "expiresIn",
            fixedFields: [String: String] = [:],
            statusCode: Int = 200
        ) {
            self.accessTokenField = accessTokenField
            self.refreshTokenField = refreshTokenField
            self.expiresInField = expiresInField
            self.fixedFields = fixedFields
            self.statusCode = statusCode
        }

        /// The answer carrying `tokens`, as JSON with sorted keys.
        public func response(for tokens: Tokens) -> MockResponse {
            var object: [String: Any] = [:]
            for (name, value) in fixedFields { Self.set(value, at: name, in: &object) }
            Self.set(tokens.accessToken, at: accessTokenField, in: &object)
            Self.set(tokens.refreshToken, at: refreshTokenField, in: &object)
            if let field = expiresInField, let lifetime = tokens.expiresIn { Self.set(lifetime, at: field, in: &object) }
            // A non-finite lifetime is no JSON number (and JSONSerialization raises on it on Apple platforms).
            let body =
                JSONSerialization.isValidJSONObject(object)
                ? ((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)) : Data("{}".utf8)
            return MockResponse(statusCode: statusCode, headers: ["Content-Type": "application/json"], body: body)
        }

        private static func set(_ value: Any, at name: String, in object: inout [String: Any]) {
            let keys = name.split(separator: ".").map(String.init)
            guard let first = keys.first else { return }
            guard keys.count > 1 else {
                object[first] = value
                return
            }
            var nested = object[first] as? [String: Any] ?? [:]
            set(value, at: keys.dropFirst().joined(separator: "."), in: &nested)
            object[first] = nested
        }
    }

    /// What a rejected refresh gets: a status and a JSON body. A `200` whose body says the refresh failed
    /// is one, for an app whose envelope carries its own failure codes.
    public struct Rejection: Sendable, Equatable {
        /// The status.
        public var statusCode: Int
        /// The JSON body.
        public var body: String

        /// Describes the rejection.
        public init(statusCode: Int, body: String) {
            self.statusCode = statusCode
            self.body = body
        }

        /// OAuth 2.0's rejection (RFC 6749 §5.2): `{"error":"invalid_grant"}` with `statusCode`, 400 by
        /// the RFC (some servers send 401).
        public static func invalidGrant(statusCode: Int = 400) -> Rejection {
            Rejection(statusCode: statusCode, body: #"{"error":"invalid_grant"}"#)
        }

        /// The response.
        var response: MockResponse { .json(raw: body, statusCode: statusCode) }
    }
}
