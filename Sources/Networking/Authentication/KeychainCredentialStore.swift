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
        /// Why the Keychain store failed.
        public enum KeychainError: Error, Sendable, CustomStringConvertible {
            /// A `SecItem…` call returned this `OSStatus`.
            case unexpectedStatus(OSStatus)
            /// The stored item is not a credential this store wrote; signing in again replaces it.
            case corruptItem

            /// What failed: the `OSStatus` of the call, or that the item is not a credential.
            public var description: String {
                switch self {
                case .unexpectedStatus(let status): return "Keychain error \(status)"
                case .corruptItem: return "The Keychain item does not hold a credential"
                }
            }
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
                // On macOS, the iOS-style keychain, which honours the accessibility below.
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        /// Reads the credential from the Keychain item, or `nil` when there is none; throws `KeychainError.corruptItem` when
        /// the item does not hold a credential this store wrote.
        public func load() async throws -> Credential? {
            var query = self.query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw KeychainError.unexpectedStatus(status) }
            guard let data = item as? Data, let credential = try? JSONDecoder().decode(Credential.self, from: data) else {
                throw KeychainError.corruptItem
            }
            return credential
        }

        /// Writes `credential` to the Keychain item, creating it or replacing its contents; readable after the first unlock,
        /// on this device only.
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
            guard status == errSecSuccess else { throw KeychainError.unexpectedStatus(status) }
        }

        /// Deletes the Keychain item; succeeds when there is none.
        public func delete() async throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError.unexpectedStatus(status) }
        }
    }
#endif
