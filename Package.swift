// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Networking",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "Networking", targets: ["Networking"]),
        .library(name: "NetworkingTestSupport", targets: ["NetworkingTestSupport"]),
        .executable(name: "networking-demo", targets: ["NetworkingDemo"]),
    ],
    targets: [
        .target(name: "Networking"),
        .target(name: "NetworkingTestSupport", dependencies: ["Networking"]),
        .executableTarget(name: "NetworkingDemo", dependencies: ["Networking", "NetworkingTestSupport"]),
        .testTarget(
            name: "NetworkingTests", dependencies: ["Networking", "NetworkingTestSupport"],
            resources: [.copy("Fixtures")]   // certificates and their pins from openssl, NIST's SHA-256 vectors
        ),
    ],
    swiftLanguageModes: [.v6]
)
