import FakeS3
import Foundation

// Issue 55, videos, on the path a user runs (the CLI end to end, a bucket another tool wrote):
// - the metadata of a 1 GiB MP4 whose `moov` follows the media data: the requests and bytes `cloudassets sync`
//   reads for it, beside `ffprobe` reading the same object over HTTP (what a user would otherwise run);
// - its poster frame: `cloudassets thumbnail --network` (the first frame, by range), beside
//   `ffmpeg -ss 0 -i URL -frames:v 1` writing a JPEG from the same object over HTTP: time and bytes fetched;
// - a seek in a cloud-only video: the time from `cloudassets play`'s URL to the first decoded frame at the middle
//   (`ffmpeg -ss` on the URL), beside downloading the whole original first (curl).

func runVideoBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("video")
    defer { removeScratch(scratch) }
    let clip = scratch.appendingPathComponent("clip.mp4")
    let made = try run(
        "/usr/bin/ffmpeg",
        [
            "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "60", "-c:v",
            "libx264", "-preset", "ultrafast", "-g", "30", "-pix_fmt", "yuv420p", clip.path,
        ])
    guard made.status == 0 else { throw BenchError("ffmpeg could not make the clip") }
    let body = try oneGiBMovie(from: Data(contentsOf: clip))
    var configuration = FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret")
    configuration.publicBuckets = ["photos"]
    let server = try FakeS3Server(configuration: configuration)
    try await server.start()
    do {
        let rows = try await measureVideo(server, body: body, scratch: scratch)
        try await server.stop()
        return rows
    } catch {
        // try?: the section has failed already; its error is the one reported
        try? await server.stop()
        throw error
    }
}

/// The clip with its media data padded to make the file 1 GiB: `moov` stays last and its sample offsets still
/// point at the clip's frames (the padding follows them inside `mdat`).
private func oneGiBMovie(from clip: Data) throws -> Data {
    let bytes = [UInt8](clip)
    func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    var offset = 0
    var boxes: [(type: String, start: Int, size: Int)] = []
    while offset + 8 <= bytes.count {
        let size = be32(offset)
        guard size >= 8 else { throw BenchError("unexpected box size in the clip") }
        boxes.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset, size))
        offset += size
    }
    guard let mdat = boxes.first(where: { $0.type == "mdat" }), let moov = boxes.last, moov.type == "moov",
        moov.start > mdat.start
    else { throw BenchError("the clip's moov does not follow its mdat") }
    let total = 1 << 30
    let padding = total - bytes.count
    var out = Data(capacity: total)
    out.append(contentsOf: bytes[0..<mdat.start])
    let grown = UInt32(mdat.size + padding)
    out.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: grown >> $0) })
    out.append(contentsOf: bytes[mdat.start + 4..<mdat.start + mdat.size])
    out.append(Data(count: padding))
    out.append(contentsOf: bytes[moov.start..<moov.start + moov.size])
    return out
}

private func measureVideo(_ server: FakeS3Server, body: Data, scratch: URL) async throws -> [BenchRow] {
    try server.createBucket("photos")
    let key = "originals/clips/big.mp4"
    try server.putObject(bucket: "photos", key: key, data: body)
    let url = server.endpoint.appendingPathComponent("photos").appendingPathComponent(key).absoluteString
    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = "bench"
    environment["AWS_SECRET_ACCESS_KEY"] = "bench-secret"
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    let globals = [
        "--store", scratch.appendingPathComponent("library").path, "--endpoint", server.endpoint.absoluteString,
        "--bucket", "photos",
    ]
    func reads() -> (requests: Int, bytes: Int64) {
        let entries = server.requestLog.entries().filter { $0.key == key }
        return (entries.count, entries.reduce(0) { $0 + $1.bytesSent })
    }

    // Metadata: the first sync of the bucket (another tool's video: its container is read by range).
    server.requestLog.clear()
    let synced = try run(cli, ["sync", "--no-thumbnails"] + globals, environment: environment)
    guard synced.status == 0 else { throw BenchError("cloudassets sync exited \(synced.status)") }
    let ours = reads()
    let listed = try run(cli, ["ls", "--json", "--prefix", "clips/"] + globals, environment: environment)
    guard listed.output.contains("\"duration\":60") else { throw BenchError("no duration: \(listed.output)") }
    server.requestLog.clear()
    let probed = try run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=duration", url])
    guard probed.status == 0, probed.output.contains("duration=60") else { throw BenchError("ffprobe failed") }
    let theirs = reads()

    // Its poster frame, by each tool from the cloud-only object.
    server.requestLog.clear()
    let posterTime = try await seconds {
        let made = try run(cli, ["thumbnail", "clips/big.mp4", "--network"] + globals, environment: environment)
        guard made.status == 0, made.output.contains("first frame") else {
            throw BenchError("cloudassets thumbnail: \(made.status) \(made.output)")
        }
    }
    let posterReads = reads()
    server.requestLog.clear()
    let ffmpegPosterTime = try await seconds {
        let made = try run(
            "/usr/bin/ffmpeg",
            [
                "-loglevel", "error", "-y", "-ss", "0", "-i", url, "-frames:v", "1",
                scratch.appendingPathComponent("poster.jpg").path,
            ])
        guard made.status == 0 else { throw BenchError("ffmpeg could not write the poster frame") }
    }
    let ffmpegPosterReads = reads()

    // A seek to the middle of the cloud-only video: `cloudassets play`, then the first frame there.
    let player = Process()
    player.executableURL = URL(fileURLWithPath: cli)
    player.arguments = ["play", "clips/big.mp4", "--quiet"] + globals
    player.environment = environment
    let pipe = Pipe()
    player.standardOutput = pipe
    player.standardError = FileHandle.nullDevice
    try player.run()
    defer {
        player.interrupt()
        player.waitUntilExit()
    }
    guard let line = String(data: pipe.fileHandleForReading.availableLine(), encoding: .utf8),
        line.hasPrefix("http://127.0.0.1:")
    else { throw BenchError("cloudassets play printed no URL") }
    let playURL = line.trimmingCharacters(in: .whitespacesAndNewlines)
    server.requestLog.clear()
    let firstFrame = try await seconds {
        let frame = try run(
            "/usr/bin/ffmpeg", ["-loglevel", "error", "-ss", "30", "-i", playURL, "-frames:v", "1", "-f", "null", "-"])
        guard frame.status == 0 else { throw BenchError("ffmpeg could not decode a frame at 30 s") }
    }
    let seekReads = reads()
    let download = try await seconds {
        try curl(["-sf", "-o", scratch.appendingPathComponent("whole.mp4").path, url])
    }
    let mib = Double(1 << 20)
    return [
        BenchRow(
            name: "video: cloudassets sync reads a 1 GiB moov-at-end MP4's metadata (requests)",
            value: Double(ours.requests), unit: "req", reference: "ffprobe over HTTP",
            referenceValue: Double(theirs.requests), ratio: Double(theirs.requests) / Double(max(1, ours.requests)),
            target: "<= 4 (HEAD + 3 GETs)", met: ours.requests <= 4),
        BenchRow(
            name: "video: cloudassets sync reads a 1 GiB moov-at-end MP4's metadata (MiB read)",
            value: Double(ours.bytes) / mib, unit: "MiB", reference: "ffprobe over HTTP",
            referenceValue: Double(theirs.bytes) / mib, ratio: Double(theirs.bytes) / Double(max(1, ours.bytes)),
            target: "<= 1 MiB", met: ours.bytes <= 1 << 20),
        BenchRow(
            name: "video: poster frame of a cloud-only 1 GiB video via cloudassets thumbnail --network (s)",
            value: posterTime, unit: "s", reference: "ffmpeg -ss 0 -frames:v 1 over HTTP",
            referenceValue: ffmpegPosterTime, ratio: ffmpegPosterTime / posterTime,
            target: "report (\(posterReads.requests) GETs; ffmpeg \(ffmpegPosterReads.requests))", met: true),
        BenchRow(
            name: "video: poster frame of a cloud-only 1 GiB video via cloudassets thumbnail --network (MiB read)",
            value: Double(posterReads.bytes) / mib, unit: "MiB", reference: "ffmpeg -ss 0 -frames:v 1 over HTTP",
            referenceValue: Double(ffmpegPosterReads.bytes) / mib,
            ratio: Double(ffmpegPosterReads.bytes) / Double(max(1, posterReads.bytes)),
            target: "<= 2 MiB", met: posterReads.bytes <= 2 << 20),
        BenchRow(
            name: "video: first frame at the middle of a cloud-only 1 GiB video via cloudassets play",
            value: firstFrame, unit: "s", reference: "downloading it whole (curl)", referenceValue: download,
            ratio: download / firstFrame, target: "faster; \(seekReads.requests) GETs, report",
            met: firstFrame < download),
    ]
}

extension FileHandle {
    /// The bytes up to and including the first newline (or the end).
    fileprivate func availableLine() -> Data {
        var line = Data()
        // try?: a read that fails ends the line; the caller checks what it got
        while let byte = try? read(upToCount: 1), let first = byte.first {
            line.append(first)
            if first == 0x0A { break }
        }
        return line
    }
}
