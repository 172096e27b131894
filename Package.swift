// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]
/// For the library modules: an import is internal unless it says `public` (so a module's API names every module
/// it exposes), and a member is visible only where its module is imported.
let boundary: [SwiftSetting] =
    strict + [.enableUpcomingFeature("InternalImportsByDefault"), .enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "CloudAssets",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CloudAssets", targets: ["CloudAssets"]),
        .library(name: "FakeS3", targets: ["FakeS3"]),
        .library(name: "Gallery", targets: ["Gallery"]),
        .executable(name: "cloudassets", targets: ["cloudassets"]),
        .executable(name: "fake-s3", targets: ["fake-s3"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // TLS for the bundled fake server only (FakeS3TLS; the library's HTTPS goes through libcurl).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Libraries log and count; the app chooses where it goes (a no-op unless it bootstraps a backend).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // `make docs`: the `generate-documentation` command (a plugin only; no target depends on it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C shims: typed wrappers around libcurl's variadic API, zlib's crc32, Linux file calls Glibc's Swift
        // module does not export (sync_file_range), and a many-lane MD5.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "CZlib", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CFileIO"),
        // MD5 of sixteen messages at once on AVX-512 (whole small bodies that finish together).
        .target(name: "CDigest"),
        // OpenSSL's libcrypto (MD5, SHA-1, SHA-256), which libcurl's OpenSSL build links already: one TLS library in
        // the process, and no second BoringSSL to build.
        .target(name: "CLibCrypto", linkerSettings: [.linkedLibrary("crypto")]),
        // Image codecs: libjpeg(-turbo)'s scanline API, libpng's row API, libheif.
        .target(name: "CTurboJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "CPNG", linkerSettings: [.linkedLibrary("png16")]),
        // libheif is loaded with dlopen on first use (it pulls in four codecs a process rarely needs).
        .target(name: "CHeif", linkerSettings: [.linkedLibrary("dl")]),
        // FFmpeg's libavformat, libavcodec and libswscale, loaded with dlopen on first use the same way (they link
        // most of the system's codec libraries).
        .target(name: "CVideo", linkerSettings: [.linkedLibrary("dl")]),

        // What every module shares: the one lock box, thread-role checks, HTTP dates and ASCII helpers,
        // byte-range sets and a seeded generator.
        .target(name: "Essentials", dependencies: ["CFileIO"], swiftSettings: boundary),

        // The hash functions and HMAC every module uses, on CLibCrypto.
        .target(name: "Hashing", dependencies: ["CLibCrypto"], swiftSettings: boundary),

        // AWS Signature Version 4, shared by the client (signing) and the fake server (verifying).
        .target(
            name: "AWSSigV4",
            dependencies: ["Essentials", "Hashing"],
            swiftSettings: boundary),

        // SQLite persistence; knows nothing about HTTP.
        .target(
            name: "AssetStore",
            dependencies: [
                "Essentials",
                .product(name: "GRDB", package: "GRDB.swift"),
                // Raw sqlite3_* calls on GRDB's prepared statements in the bulk-write hot path.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: boundary),

        // libcurl HTTP engine, S3 operations, the downloader.
        .target(
            name: "S3Transfer",
            dependencies: [
                "CCurl", "CZlib", "CFileIO", "CDigest", "AWSSigV4", "Essentials",
                "Hashing",
            ],
            swiftSettings: boundary),

        // Decode, resize, orient, read metadata, strip location; imports none of the engine.
        .target(name: "Images", dependencies: ["CTurboJPEG", "CPNG", "CHeif"], swiftSettings: boundary),

        // Video containers: metadata from a few byte ranges of an MP4 or QuickTime file; imports none of the engine.
        // Poster frames through CVideo, sized and turned upright by Images.
        .target(name: "Video", dependencies: ["CVideo", "Images"], swiftSettings: boundary),

        // Public API.
        .target(
            name: "CloudAssets",
            dependencies: [
                "AssetStore", "S3Transfer", "Images", "Video", "Essentials", "CFileIO", "CZlib",
                "Hashing", "HTTPServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: boundary),

        // What the two executables share: one way to parse, run and end with a one-line error.
        .target(
            name: "CommandLineSupport",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict),

        // What the two HTTP servers on SwiftNIO (the gallery, the fake S3 server) share: closing idle connections.
        .target(
            name: "HTTPServerSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: boundary),

        // The web gallery and picker (`cloudassets serve`): an HTTP server on SwiftNIO and the page's files.
        .target(
            name: "Gallery",
            dependencies: [
                "CloudAssets", "Essentials", "HTTPServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict),

        .executableTarget(
            name: "cloudassets",
            dependencies: [
                "CloudAssets", "FakeS3", "Gallery", "CFileIO", "CommandLineSupport", "Essentials", "Video",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The bundled fake S3 server (its sample library makes real JPEGs with Images).
        .target(
            name: "FakeS3",
            dependencies: [
                "AWSSigV4", "CZlib", "Essentials", "Images", "Video", "HTTPServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                "Hashing",
            ],
            path: "TestServer/FakeS3",
            swiftSettings: strict),
        // HTTPS for the fake server (swift-nio-ssl, with its own BoringSSL): only `fake-s3` and the HTTPS tests link
        // it, so that `make demo` (plain HTTP) does not build it.
        .target(
            name: "FakeS3TLS",
            dependencies: [
                "FakeS3", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "TestServer/FakeS3TLS",
            swiftSettings: strict),
        .executableTarget(
            name: "fake-s3",
            dependencies: [
                "FakeS3", "FakeS3TLS", "CommandLineSupport", "Essentials",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "TestServer/fake-s3",
            swiftSettings: strict),

        .executableTarget(
            name: "ca-bench",
            dependencies: [
                "CloudAssets", "AssetStore", "S3Transfer", "FakeS3", "Essentials", "Images", "Gallery", "Hashing",
            ],
            path: "Benchmarks/ca-bench",
            swiftSettings: strict),

        // Fuzzing (docs/fuzzing.md): each parser's harness, with the properties every input must keep; `make fuzz`
        // runs them under libFuzzer (ca-fuzz built with CA_LIBFUZZER), `make test` replays their committed inputs.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "S3Transfer", "CloudAssets", "AssetStore", "Essentials", "Images", "CTurboJPEG", "FakeS3", "Gallery",
                "AWSSigV4", "Video", "HTTPServerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Fuzz/Targets", swiftSettings: strict),
        .executableTarget(
            name: "ca-fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/ca-fuzz", swiftSettings: strict),
        .testTarget(name: "FuzzReplayTests", dependencies: ["FuzzTargets", "Images", "TestSupport"]),

        .testTarget(name: "AWSSigV4Tests", dependencies: ["AWSSigV4"]),
        .testTarget(name: "VideoTests", dependencies: ["Video", "Images", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "ImagesTests",
            dependencies: ["Images", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(
            name: "AssetStoreTests",
            dependencies: [
                "AssetStore", "Essentials", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "S3TransferTests", dependencies: ["S3Transfer", "FakeS3", "Essentials", "TestSupport", "Hashing"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "CloudAssetsTests",
            dependencies: [
                "CloudAssets", "FakeS3", "FakeS3TLS", "Images", "Video", "Essentials", "TestSupport", "Hashing",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "FakeS3Tests",
            dependencies: ["FakeS3", "AWSSigV4", "Images", "Video", "Essentials", "TestSupport", "Hashing"]),
        // Helpers more than one test target needs.
        .target(name: "TestSupport", dependencies: ["Essentials"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(
            name: "GalleryTests",
            dependencies: [
                "Gallery", "CloudAssets", "FakeS3", "Essentials", "TestSupport",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .testTarget(
            name: "CLITests", dependencies: ["FakeS3", "FakeS3TLS", "Images", "TestSupport", "Essentials", "AWSSigV4"]),
        // The child processes the crash tests start and kill (`kill -9` mid-download, mid-upload).
        .executableTarget(
            name: "ca-test-child", dependencies: ["CloudAssets"], path: "Tests/TestChild", swiftSettings: strict),
        // Fault soak, crash suite, hostile input: short forms in `make test`, full with CLOUDASSETS_SOAK=full.
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "CloudAssets", "S3Transfer", "AssetStore", "FakeS3", "AWSSigV4", "TestSupport", "Essentials",
                "Hashing",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
