// swift-tools-version:6.0
// Compiles the library's Combine bridge (Sources/Networking/Bridging, symlinked) against OpenCombine on Linux,
// where Combine is not, and tests it (`.ci/combine-check.sh`). Its own package, so the library keeps zero
// dependencies: in the library the bridge compiles only where Combine is, and to nothing elsewhere.
//
// For Linux only. On Apple platforms the library compiles the bridge itself against Combine (the apple.yml
// workflow builds it), so here its files compile to nothing, OpenCombine is not linked, and there is no test
// target (the tests reach the bridge's internals through `@testable import NetworkingCombine`).
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which is whatever the clone was called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// The bridge's files import Networking and OpenCombine only when built here (see their conditional imports).
let bridgeSettings: [SwiftSetting] = [.define("NETWORKING_COMBINE_BRIDGE_PACKAGE")]

var targets: [Target] = [
    .target(
        name: "NetworkingCombine",
        dependencies: [
            .product(name: "Networking", package: root),
            .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
        ],
        swiftSettings: bridgeSettings
    )
]
#if os(Linux)
    targets.append(
        .testTarget(
            name: "NetworkingCombineTests",
            dependencies: [
                "NetworkingCombine",
                .product(name: "Networking", package: root),
                .product(name: "NetworkingTestSupport", package: root),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ],
            swiftSettings: bridgeSettings
        )
    )
#endif

let package = Package(
    name: "CombineBridge",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: targets,
    swiftLanguageModes: [.v6]
)
