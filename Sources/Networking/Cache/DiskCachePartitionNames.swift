import Foundation

/// The names of a ``DiskResponseCache`` folder's partition subfolders, salted per folder.
///
/// The calls that needed no authentication are in `public`; an account's partition (its
/// ``CacheKey/partition(forAccount:)``, the SHA-256 digest of the account) in the hexadecimal SHA-256
/// digest of the folder's salt followed by the partition. The salt is 32 random bytes made when the folder
/// is first used and kept in the folder's `.partition-salt` file: the same account gets another name in
/// every folder (so on every install), and a name cannot be matched to an account with a table of digests
/// made in advance. (Whoever copies the whole folder, salt included, can still try candidate accounts.)
///
/// The salt file is the magic `NWSALT1\n`, the 32 bytes of salt and the first 8 bytes of the SHA-256
/// digest of both. A file that is not exactly that (torn by a crash, damaged) is replaced by a new salt;
/// the account folders of the old salt (or of a version without one) can no longer be found, and are
/// removed with it.
struct DiskCachePartitionNames: Sendable {
    /// The name of the salt file in the cache's folder.
    static let fileName = ".partition-salt"
    private static let magic = Array("NWSALT1\n".utf8)
    private static let saltSize = 32
    private static let checksumSize = 8
    private static var fileSize: Int { magic.count + saltSize + checksumSize }

    private let salt: [UInt8]

    /// What reading a folder's salt file found.
    enum Reading {
        case found(DiskCachePartitionNames)
        /// No file, or one that is not a whole salt file: a new salt replaces it.
        case missingOrDamaged
        /// The file is there but cannot be read now (e.g. its protection class while the device is locked).
        case unreadable
    }

    /// The subfolder of `partition`: `public` for `nil`, else the salted digest.
    func folder(for partition: String?) -> String {
        guard let partition else { return "public" }
        return SHA256.hex(SHA256.digest(salt + Array(partition.utf8)))
    }

    /// `key` as the cache files it: its partition replaced by its folder's name, so that no file holds the
    /// unsalted digest of an account.
    func storedKey(_ key: CacheKey) -> CacheKey {
        guard key.partition != nil else { return key }
        return CacheKey(partition: folder(for: key.partition), method: key.method, url: key.url)
    }

    /// Whether `name` is the name of a partition subfolder: `public` or a digest.
    static func isFolderName(_ name: String) -> Bool {
        name == "public" || (name.utf8.count == 64 && isHex(name))
    }

    /// Whether `name` may be an account's subfolder of any version: up to 64 lowercase hexadecimal digits
    /// (before salts, short partitions were used as they were).
    static func isAccountFolderName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && isHex(name)
    }

    static func isHex(_ text: String) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// The salt file's bytes.
    private var fileBytes: [UInt8] {
        let body = Self.magic + salt
        return body + SHA256.digest(body).prefix(Self.checksumSize)
    }

    /// The names of `bytes`, a salt file's contents, or `nil` when they are not a whole salt file.
    static func parse(_ bytes: [UInt8]) -> DiskCachePartitionNames? {
        guard bytes.count == fileSize, bytes.starts(with: magic) else { return nil }
        let body = Array(bytes.prefix(magic.count + saltSize))
        guard SHA256.digest(body).prefix(checksumSize).elementsEqual(bytes.suffix(checksumSize)) else { return nil }
        return DiskCachePartitionNames(salt: Array(body.suffix(saltSize)))
    }

    /// Reads the salt file in the folder `root`.
    static func load(inFolder root: String) -> Reading {
        let descriptor = open("\(root)/\(fileName)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT ? .missingOrDamaged : .unreadable }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: fileSize + 1)
        var count = 0
        while count < bytes.count {
            let result = bytes.withUnsafeMutableBytes { buffer in buffer.baseAddress.map { read(descriptor, $0 + count, buffer.count - count) } ?? 0 }
            if result > 0 {
                count += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                return .unreadable
            }
        }
        return parse(Array(bytes.prefix(count))).map(Reading.found) ?? .missingOrDamaged
    }

    /// Writes a new random salt to the folder `root`, replacing its salt file atomically (a new file renamed
    /// over it), and returns its names, or `nil` when it could not be written. Called by the folder's owner.
    static func create(inFolder root: String) -> DiskCachePartitionNames? {
        var generator = SystemRandomNumberGenerator()   // the system's cryptographically secure source
        let names = DiskCachePartitionNames(salt: (0..<saltSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let temporary = "\(root)/\(fileName).new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        let bytes = names.fileBytes
        let written = bytes.withUnsafeBytes { buffer in buffer.baseAddress.map { write(descriptor, $0, buffer.count) } ?? 0 } == bytes.count
        guard close(descriptor) == 0, written, rename(temporary, "\(root)/\(fileName)") == 0 else {
            unlink(temporary)
            return nil
        }
        return names
    }
}
