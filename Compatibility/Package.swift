// swift-tools-version:6.0
// A fresh app package that still uses deprecated API: it must build, with deprecation warnings only
// (`.ci/api-check.sh` builds it). Its own package, so the library's zero-warnings build never sees them.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is whatever the clone was called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "NetworkingCompatibility",
    platforms: [.iOS(.v15), .macOS(.v12)],
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "OldAPIApp", dependencies: [.product(name: "Networking", package: root)])
    ],
    swiftLanguageModes: [.v6]
)
