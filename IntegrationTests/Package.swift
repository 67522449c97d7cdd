// swift-tools-version:6.0
// Integration tests: the Networking package against a real HTTP server (Hummingbird) on loopback.
// Its own package, so the library's Package.swift stays dependency-free.
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is whatever the clone was called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "NetworkingIntegrationTests",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/vapor/multipart-kit", exact: "4.7.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
    ],
    targets: [
        .target(
            name: "TestServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // One call in a process of its own, its peak memory measured (BodyMemoryTests): only the library.
        .executableTarget(
            name: "MemoryProbe",
            dependencies: [.product(name: "Networking", package: root)]
        ),
        // One call for a chunked body that ends with trailer fields, in a process of its own: FoundationNetworking
        // traps on it (ChunkedTrailerTests). Only the library, and a raw TCP server of its own.
        .executableTarget(
            name: "TrailerProbe",
            dependencies: [.product(name: "Networking", package: root)]
        ),
        // The outbox crash test (issue 32): the child a driver SIGKILLs (only the library), the driver (the test
        // server and child processes), and the full run as a command of its own (outbox-crash.sh).
        .executableTarget(
            name: "OutboxCrashChild",
            dependencies: [.product(name: "Networking", package: root)]
        ),
        .target(name: "OutboxCrashDriver", dependencies: ["TestServer"]),
        .executableTarget(name: "OutboxCrash", dependencies: ["OutboxCrashDriver"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TestServer",
                "OutboxCrashDriver",
                .product(name: "Networking", package: root),
                .product(name: "NetworkingTestSupport", package: root),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
