// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "NetworkingBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(name: "Networking", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "NetworkingBenchmarks",
            dependencies: [
                .product(name: "Networking", package: "Networking"),
                .product(name: "NetworkingTestSupport", package: "Networking"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/NetworkingBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
