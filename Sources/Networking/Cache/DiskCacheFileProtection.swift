import Foundation

extension DiskResponseCache {
    /// The data protection class a ``DiskResponseCache`` gives its entry files: by default none of its own,
    /// so that they get the app's default class.
    ///
    /// The class is set on iOS, iPadOS (Mac Catalyst included), tvOS, watchOS and visionOS; macOS and Linux
    /// have no per-file protection classes for the cache to set, and write the files as they are.
    ///
    /// An entry whose asked-for class cannot be set is not written at all (as an entry that cannot be
    /// written: its key misses), never written with a weaker class.
    ///
    /// ```swift
    /// let cache = DiskResponseCache(directory: folder, fileProtection: .complete)
    /// ```
    public struct FileProtection: Hashable, Sendable, CustomStringConvertible {
        /// The class to set, or `nil` to set none.
        let rawValue: String?

        private init(_ rawValue: String?) { self.rawValue = rawValue }

        /// Sets no class: each file gets the app's default (its `com.apple.developer.default-data-protection`
        /// entitlement, or the system's, "until first user authentication", when it has none). The default.
        public static let inherit = FileProtection(nil)
        /// `FileProtectionType.complete`: readable and writable only while the device is unlocked; entries
        /// read or stored while it is locked are misses.
        public static let complete = FileProtection("complete")
        /// `FileProtectionType.completeUnlessOpen`: a file open when the device locks stays usable; new
        /// files can be created while it is locked.
        public static let completeUnlessOpen = FileProtection("completeUnlessOpen")
        /// `FileProtectionType.completeUntilFirstUserAuthentication`: readable once the user has unlocked the
        /// device after it started (what URLSession's own cache uses).
        public static let completeUntilFirstUserAuthentication = FileProtection("completeUntilFirstUserAuthentication")
        /// `FileProtectionType.none`: no protection beyond the file system's own.
        public static let none = FileProtection("none")

        /// The class's name (`complete`, …), or `inherit`.
        public var description: String { rawValue ?? "inherit" }

        /// The attributes a file of this class is given: none for ``inherit``, else its protection key.
        var fileAttributes: [FileAttributeKey: Any] {
            guard let rawValue else { return [:] }
            return [.protectionKey: Self.protectionType(named: rawValue)]
        }

        private static func protectionType(named name: String) -> FileProtectionType {
            switch name {
            case "complete": return .complete
            case "completeUnlessOpen": return .completeUnlessOpen
            case "completeUntilFirstUserAuthentication": return .completeUntilFirstUserAuthentication
            default: return .none
            }
        }

        /// Gives the new, still empty file at `path` this class with `setAttributes`, and returns whether
        /// the file may be written: `true` when there is nothing to set or it was set, `false` when setting
        /// it failed (the caller then removes the file rather than fill it unprotected).
        func apply(toItemAtPath path: String, setAttributes: ([FileAttributeKey: Any], String) throws -> Void) -> Bool {
            let attributes = fileAttributes
            guard !attributes.isEmpty else { return true }
            do {
                try setAttributes(attributes, path)
                return true
            } catch {
                return false
            }
        }

        /// ``apply(toItemAtPath:setAttributes:)`` with the platform's file manager where files have
        /// protection classes, else nothing (`true`).
        func applyOnThisPlatform(toItemAtPath path: String) -> Bool {
            #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
                return apply(toItemAtPath: path) { try FileManager.default.setAttributes($0, ofItemAtPath: $1) }
            #else
                return true
            #endif
        }
    }
}
