#if canImport(Security)
import Foundation
import Security

/// A ``CredentialStore`` in the Keychain (Apple platforms only; not compiled by this repository's
/// Linux CI).
///
/// Keeps the credential as one generic-password item under the service and account you choose,
/// readable after the device's first unlock (so background refreshes work) and never synced.
///
/// ```swift
/// let store = KeychainCredentialStore(service: "com.example.app.auth", account: "default")
/// ```
public struct KeychainCredentialStore: CredentialStore {
    /// A Keychain call failed with this `OSStatus`.
    public struct KeychainError: Error, Sendable, CustomStringConvertible {
        /// The status `SecItem…` returned.
        public let status: OSStatus
        public var description: String { "Keychain error \(status)" }
    }

    private let service: String
    private let account: String

    /// Creates a store for the item with this service and account.
    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    public func load() async throws -> Credential? {
        var query = self.query
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        return try JSONDecoder().decode(Credential.self, from: data)
    }

    public func save(_ credential: Credential) async throws {
        let data = try JSONEncoder().encode(credential)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            let item = query.merging(attributes) { _, new in new }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    public func delete() async throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }
}
#endif
