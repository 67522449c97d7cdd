// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "NetworkingBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "probe", targets: ["Probe"])
    ],
    dependencies: [
        .package(name: "Networking", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(name: "SharedFixtures", path: "SharedFixtures"),
        // A plain driver for callgrind and dhat (compare.sh): no benchmark harness around the loops. Not under
        // a directory named Benchmarks, so the benchmark plugin does not take it for a benchmark.
        .executableTarget(
            name: "Probe",
            dependencies: [
                "SharedFixtures",
                .product(name: "Networking", package: "Networking"),
                .product(name: "NetworkingTestSupport", package: "Networking"),
            ],
            path: "Tools/Probe"
        ),
        .executableTarget(
            name: "NetworkingBenchmarks",
            dependencies: [
                "SharedFixtures",
                .product(name: "Networking", package: "Networking"),
                .product(name: "NetworkingTestSupport", package: "Networking"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/NetworkingBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
