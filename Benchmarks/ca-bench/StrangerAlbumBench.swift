import FakeS3
import Foundation

// Issue 53, a stranger's album: a bucket of 2,000 originals with a 150,000-member album document (about 25 MB,
// inside the caps) naming keys that do not exist. As a user runs it, process start to exit:
// - `cloudassets sync` with nothing new on a library that has read that album once, against the same sync on a
//   library of the same bucket without it (the median of 5 each; target <= 1.5x);
// - the first sync that reads it, against the first sync of the bucket without it (report).

func runStrangerAlbumBenchmarks() async throws -> [BenchRow] {
    let scratch = try makeScratch("stranger-album")
    defer { removeScratch(scratch) }
    let server = try FakeS3Server(
        configuration: FakeS3Configuration(accessKeyID: "bench", secretAccessKey: "bench-secret"))
    try await server.start()
    do {
        let rows = try await measureStrangerAlbum(server, scratch: scratch)
        try await server.stop()
        return rows
    } catch {
        try? await server.stop()
        throw error
    }
}

private func measureStrangerAlbum(_ server: FakeS3Server, scratch: URL) async throws -> [BenchRow] {
    let payload = Data([0xFF])
    for bucket in ["plain", "stranger"] {
        try server.createBucket(bucket)
        for index in 0..<2_000 {
            try server.putObject(
                bucket: bucket, key: String(format: "originals/IMG_%05d.jpg", index), data: payload,
                metadata: ["creation-date": "2024-01-01T00:00:00Z", "media-type": "image"])
        }
    }
    let id = UUID().uuidString.lowercased()
    try server.putObject(
        bucket: "stranger", key: "collections/\(id).json", data: strangerAlbum(id: id, members: 150_000))

    var environment = ProcessInfo.processInfo.environment
    environment["AWS_ACCESS_KEY_ID"] = "bench"
    environment["AWS_SECRET_ACCESS_KEY"] = "bench-secret"
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    func sync(_ bucket: String) throws -> Double {
        let started = Date()
        let result = try run(
            cli,
            [
                "sync", "--store", scratch.appendingPathComponent(bucket).path, "--endpoint",
                server.endpoint.absoluteString, "--bucket", bucket, "--no-thumbnails",
            ], environment: environment)
        guard result.status == 0 else { throw BenchError("cloudassets sync of \(bucket) exited \(result.status)") }
        return Date().timeIntervalSince(started)
    }
    func median(_ bucket: String) throws -> Double {
        let times = try (0..<5).map { _ in try sync(bucket) }
        return times.sorted()[2]
    }
    let firstPlain = try sync("plain")
    let firstStranger = try sync("stranger")
    let idlePlain = try median("plain")
    let idleStranger = try median("stranger")
    return [
        BenchRow(
            name: "albums: cloudassets sync, nothing new, beside a stranger's 150,000-key album (median of 5)",
            value: idleStranger, unit: "s", reference: "the same sync without it", referenceValue: idlePlain,
            ratio: idleStranger / idlePlain, target: "<= 1.5x", met: idleStranger <= 1.5 * idlePlain),
        BenchRow(
            name: "albums: first cloudassets sync of 2,000 objects and that album (read once)",
            value: firstStranger, unit: "s", reference: "first sync without it", referenceValue: firstPlain,
            ratio: firstStranger / firstPlain, target: "report", met: true),
    ]
}

/// An album document naming `members` keys no object has.
private func strangerAlbum(id: String, members: Int) -> Data {
    let stamp = #"{"device":"stranger","time":1000}"#
    var text = #"{"format":1,"id":"\#(id)","kind":"album","title":"Big","titleStamp":\#(stamp),"#
    text += #""parentStamp":\#(stamp),"members":["#
    text += (0..<members).map { index in
        #"{"key":"originals/ghost/\#(index / 1000)/IMG_\#(index).jpg","added":\#(stamp),"#
            + #""position":\#(index + 1),"placed":\#(stamp)}"#
    }.joined(separator: ",")
    return Data((text + "]}").utf8)
}
