import FakeS3
import Foundation
import TestSupport
import Testing

/// CRC-32C (Castagnoli), bit by bit: an independent check of what the uploader computed.
private func crc32c(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
    }
    return ~crc
}

/// Runs a tool found on `PATH` (pyenv's shims included) with the fixture's credentials; nil when it is missing.
private func tool(_ arguments: [String], fixture: CLIFixture) throws -> (status: Int32, output: String)? {
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = (environment["PATH"] ?? "/usr/bin:/bin") + ":/root/.pyenv/shims:/usr/local/bin"
    let found = environment["PATH"]!.split(separator: ":").map { "\($0)/\(arguments[0])" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    guard found != nil else { return nil }
    environment["AWS_ACCESS_KEY_ID"] = CLIFixture.accessKey
    environment["AWS_SECRET_ACCESS_KEY"] = CLIFixture.secretKey
    environment["AWS_DEFAULT_REGION"] = "us-east-1"
    environment["AWS_CONFIG_FILE"] = "/dev/null"
    environment["AWS_SHARED_CREDENTIALS_FILE"] = "/dev/null"
    environment["AWS_EC2_METADATA_DISABLED"] = "true"
    environment["AWS_CA_BUNDLE"] = nil  // rclone refuses one on a plain-HTTP endpoint
    environment["RCLONE_CONFIG_FAKE_TYPE"] = "s3"
    environment["RCLONE_CONFIG_FAKE_PROVIDER"] = "Other"
    environment["RCLONE_CONFIG_FAKE_ACCESS_KEY_ID"] = CLIFixture.accessKey
    environment["RCLONE_CONFIG_FAKE_SECRET_ACCESS_KEY"] = CLIFixture.secretKey
    environment["RCLONE_CONFIG_FAKE_ENDPOINT"] = fixture.server.endpoint.absoluteString
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

@Suite("Objects uploaded by cloudassets read back with the aws CLI and rclone", .heavy)
struct UploadInteropTests {
    @Test(arguments: [100_000, 20 << 20])
    func uploadedObjectsReadBackByteForByteWithTheirChecksum(size: Int) async throws {
        try await withFixture(assets: 1) { fixture in
            var bytes = Data(count: size)
            bytes.withUnsafeMutableBytes { raw in
                for i in raw.indices { raw[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            }
            let file = fixture.folder.appendingPathComponent("clip-\(size).mov")
            try bytes.write(to: file)
            let added = try await fixture.run("add", [file.path])
            expectSuccess(added)
            let key = try #require(added.stdout.split(separator: "\t").last?.trimmingCharacters(in: .newlines))
            let endpoint = fixture.server.endpoint.absoluteString
            let url = "s3://\(CLIFixture.bucket)/\(key)"
            let back = fixture.folder.appendingPathComponent("back-aws")
            guard
                let copied = try tool(
                    ["aws", "--endpoint-url", endpoint, "s3", "cp", url, back.path], fixture: fixture)
            else {
                Issue.record("the aws CLI is not installed (make test installs it)")
                return
            }
            #expect(copied.status == 0)
            #expect(try Data(contentsOf: back) == bytes)
            let head = try #require(
                try tool(
                    [
                        "aws", "--endpoint-url", endpoint, "s3api", "head-object", "--bucket", CLIFixture.bucket,
                        "--key", key, "--checksum-mode", "ENABLED",
                    ], fixture: fixture))
            #expect(head.status == 0)
            let expected = withUnsafeBytes(of: crc32c(bytes).bigEndian) { Data($0).base64EncodedString() }
            #expect(head.output.contains("\"ChecksumCRC32C\": \"\(expected)\""), "\(head.output)")
            #expect(head.output.contains("sha256"), "the content hash travels as x-amz-meta-sha256")

            let viaRclone = fixture.folder.appendingPathComponent("back-rclone")
            if let rclone = try tool(
                ["rclone", "copyto", "fake:\(CLIFixture.bucket)/\(key)", viaRclone.path], fixture: fixture)
            {
                #expect(rclone.status == 0)
                #expect(try Data(contentsOf: viaRclone) == bytes)
            }
        }
    }
}
