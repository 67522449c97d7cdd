// The JSON object every benchmark and the probe decode, shared so that both measure the same work.

/// The body every request benchmark decodes: a typical small API object (~300 bytes of JSON).
public struct User: Codable, Sendable {
    public var id: Int
    public var name: String
    public var email: String
    public var isActive: Bool
    public var roles: [String]
    public var createdAt: String
    public var address: Address

    public struct Address: Codable, Sendable {
        public var street: String
        public var city: String
        public var postcode: String
        public var country: String
    }

    public static let sample = User(
        id: 1,
        name: "Kim Lee",
        email: "kim.lee@example.com",
        isActive: true,
        roles: ["admin", "editor", "viewer"],
        createdAt: "2024-05-01T12:00:00Z",
        address: Address(street: "1 Infinite Loop", city: "Seoul", postcode: "04524", country: "KR")
    )
}
