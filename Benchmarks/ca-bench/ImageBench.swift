import CloudAssets
import Dispatch
import Essentials
import Foundation
import Images

// Thumbnails against libvips' `vipsthumbnail`: one 24 MP JPEG to 256 px in a child process each (time and the
// process's own peak RSS: wait4's ru_maxrss, through /usr/bin/time), and 200 12 MP JPEGs to 256 px with 2 worker threads here against two
// vipsthumbnail processes with half the files each.

/// `ca-bench thumbnail SIZE OUTDIR IN...`: the hidden child mode the single-image row measures. Decodes each
/// input to fit SIZE x SIZE and writes OUTDIR/<name>.jpg; exits 1 on the first failure.
func runThumbnailCommand(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 3, let size = Int(arguments[0]) else {
        FileHandle.standardError.write(Data("usage: ca-bench thumbnail SIZE OUTDIR IN...\n".utf8))
        return 2
    }
    let outputs = URL(fileURLWithPath: arguments[1])
    for input in arguments[2...] {
        do {
            try writeThumbnail(input, size: size, to: outputs)
        } catch {
            FileHandle.standardError.write(Data("ca-bench thumbnail: \(input): \(error)\n".utf8))
            return 1
        }
    }
    return 0
}

private func writeThumbnail(_ input: String, size: Int, to folder: URL) throws {
    let (image, _) = try ImageDecoder.decode(
        fileAt: input, request: DecodeRequest(targetWidth: size, targetHeight: size))
    let jpeg = try ImageEncoder.jpeg(image, quality: 80)
    let name = URL(fileURLWithPath: input).deletingPathExtension().lastPathComponent + ".jpg"
    try Data(jpeg).write(to: folder.appendingPathComponent(name))
}

/// A photo-like JPEG: smooth gradients plus seeded noise (so it does not compress like flat colour); with
/// `embeddedThumbnail`, its EXIF carries a 160 × 120 JPEG thumbnail, as a camera's does.
func writeSampleJPEG(
    _ url: URL, width: Int, height: Int, orientation: Int, seed: UInt64, embeddedThumbnail: Bool = false
) throws {
    var exif = ExifBuilder()
    exif.orientation = orientation
    if embeddedThumbnail {
        exif.thumbnailJPEG = try ImageEncoder.jpeg(width: 160, height: 120, quality: 80, exif: nil) { y, row in
            for x in 0..<160 {
                row[x * 4] = UInt8(truncatingIfNeeded: x + Int(seed))
                row[x * 4 + 1] = UInt8(truncatingIfNeeded: y * 2)
                row[x * 4 + 2] = UInt8(truncatingIfNeeded: x + y)
                row[x * 4 + 3] = 255
            }
        }
    }
    exif.captureDate = Date(timeIntervalSince1970: 1_700_000_000 + Double(seed) * 3600)
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    let phase = Int(seed % 97)
    let jpeg = try ImageEncoder.jpeg(width: width, height: height, quality: 90, exif: exif.tiffPayload()) { y, row in
        for x in 0..<width {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let noise = Int(state & 15) - 8
            let r = (x * 255 / width + phase + noise) & 0xFF
            let g = ((y * 255 / height) + noise) & 0xFF
            let b = ((x + y) * 255 / (width + height) + 2 * noise) & 0xFF
            row[x * 4] = UInt8(r)
            row[x * 4 + 1] = UInt8(g)
            row[x * 4 + 2] = UInt8(b)
            row[x * 4 + 3] = 255
        }
    }
    try Data(jpeg).write(to: url)
}

/// Runs several programs at once; the wall time until the last one ends.
func spawnTogether(_ commands: [(String, [String])]) throws -> Double {
    let start = now()
    var pids: [pid_t] = []
    var argvs: [[UnsafeMutablePointer<CChar>?]] = []
    defer { for argv in argvs { for pointer in argv { free(pointer) } } }
    for (executable, arguments) in commands {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        argvs.append(argv)
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, nil, nil, argv, environ) == 0 else {
            throw BenchError("cannot start \(executable)")
        }
        pids.append(pid)
    }
    for pid in pids {
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0 {
            guard errno == EINTR else { throw BenchError("waitpid failed: \(errno)") }
        }
        guard exitStatus == 0 else { throw BenchError("a vipsthumbnail process failed (status \(exitStatus))") }
    }
    return now() - start
}

func runImageBenchmarks() async throws -> [BenchRow] {
    let vips = "/usr/bin/vipsthumbnail"
    guard FileManager.default.isExecutableFile(atPath: vips) else {
        return [
            BenchRow(
                name: "images: skipped (vipsthumbnail not installed: apt-get install libvips-tools)", value: .nan,
                unit: "", reference: "", referenceValue: nil, ratio: nil, target: "", met: true)
        ]
    }
    let scratch = try makeScratch("images")
    defer { removeScratch(scratch) }
    let inputs = scratch.appendingPathComponent("in")
    let ourOutputs = scratch.appendingPathComponent("ours")
    let vipsOutputs = scratch.appendingPathComponent("vips")
    for folder in [inputs, ourOutputs, vipsOutputs] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    // (a) One 24 MP JPEG (EXIF orientation 6), each side 5 times in alternation after one warm-up each.
    let large = inputs.appendingPathComponent("large-24mp.jpg")
    try writeSampleJPEG(large, width: 6000, height: 4000, orientation: 6, seed: 7)
    let ourCommand = productsDirectory.appendingPathComponent("ca-bench").path
    // Under /usr/bin/time: it forks (so the measured process starts from time's small address space; Linux
    // carries the high-water mark across exec, and posix_spawn from here would start from ours) and reports
    // wait4's ru_maxrss of its child.
    let ours = { try timedRun(ourCommand, ["thumbnail", "256", ourOutputs.path, large.path]) }
    let theirs = {
        try timedRun(vips, [large.path, "-s", "256", "-o", vipsOutputs.appendingPathComponent("large.jpg").path])
    }
    _ = try ours()
    _ = try theirs()
    var ourRuns: [(seconds: Double, peakRSS: Int64)] = []
    var vipsRuns: [(seconds: Double, peakRSS: Int64)] = []
    for _ in 0..<5 {
        ourRuns.append(try ours())
        vipsRuns.append(try theirs())
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let ourTime = median(ourRuns.map(\.seconds))
    let vipsTime = median(vipsRuns.map(\.seconds))
    let ourRSS = median(ourRuns.map { Double($0.peakRSS) }) / 1_048_576
    let vipsRSS = median(vipsRuns.map { Double($0.peakRSS) }) / 1_048_576

    // (a') The path a user runs: `cloudassets image` on a library holding that JPEG as a local original
    // (process start, opening the catalog, the request and writing the file), against the same vipsthumbnail.
    let library = scratch.appendingPathComponent("library")
    var configuration = AssetLibrary.Configuration(storeURL: library)
    configuration.startsBackgroundTransfers = false
    let opened = try await AssetLibrary(configuration: configuration)
    let imported = try await opened.performChanges { $0.createAsset(fromFileAt: large) }
    opened.close()
    let cli = productsDirectory.appendingPathComponent("cloudassets").path
    let cliRun = {
        try timedRun(
            cli,
            [
                "image", imported[0], "--store", library.path, "--size", "256", "-q",
                "-o", ourOutputs.appendingPathComponent("cli.jpg").path,
            ])
    }
    _ = try cliRun()
    var cliRuns: [(seconds: Double, peakRSS: Int64)] = []
    for _ in 0..<5 { cliRuns.append(try cliRun()) }
    let cliTime = median(cliRuns.map(\.seconds))
    let cliRSS = median(cliRuns.map { Double($0.peakRSS) }) / 1_048_576

    // (b) 200 12 MP JPEGs of varied shapes and orientations (25 distinct images, 8 copies each).
    let shapes = [(4000, 3000), (3000, 4000), (4032, 3024), (4240, 2832), (2832, 4240)]
    var distinct: [URL] = []
    for i in 0..<25 {
        let (w, h) = shapes[i % shapes.count]
        let url = inputs.appendingPathComponent(String(format: "s%03d.jpg", i))
        try writeSampleJPEG(url, width: w, height: h, orientation: i % 8 + 1, seed: UInt64(100 + i))
        distinct.append(url)
    }
    var files: [String] = []
    for i in 0..<200 {
        let url = inputs.appendingPathComponent(String(format: "p%03d.jpg", i))
        try FileManager.default.copyItem(at: distinct[i % distinct.count], to: url)
        files.append(url.path)
    }
    // Warm the page cache for both sides.
    for file in files { _ = try Data(contentsOf: URL(fileURLWithPath: file)) }
    let failures = LockedBox(0)
    let manyFiles = files
    // Two threads of our own (not the concurrency pool's, which this async function may be holding).
    func ourMany() -> Double {
        let next = LockedBox(0)
        let done = DispatchSemaphore(value: 0)
        let start = now()
        for _ in 0..<2 {
            Thread.detachNewThread {
                while true {
                    let index = next.withLock { (value: inout Int) -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < manyFiles.count else { break }
                    do { try writeThumbnail(manyFiles[index], size: 256, to: ourOutputs) } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
                done.signal()
            }
        }
        done.wait()
        done.wait()
        return now() - start
    }
    let half = files.count / 2
    func vipsMany() throws -> Double {
        try spawnTogether([
            (vips, Array(files[..<half]) + ["-s", "256", "-o", vipsOutputs.path + "/%s.jpg"]),
            (vips, Array(files[half...]) + ["-s", "256", "-o", vipsOutputs.path + "/%s.jpg"]),
        ])
    }
    // Alternating, three runs each, medians (the machine may be shared). CPU time beside wall time: on a busy
    // machine the scheduler shares CPU per thread, and vipsthumbnail runs more threads than our two.
    var ourManyRuns: [Double] = []
    var vipsManyRuns: [Double] = []
    var ourCPU: [Double] = []
    var vipsCPU: [Double] = []
    for _ in 0..<3 {
        let ourStart = processCPUSeconds(RUSAGE_SELF)
        ourManyRuns.append(ourMany())
        ourCPU.append(processCPUSeconds(RUSAGE_SELF) - ourStart)
        let vipsStart = processCPUSeconds(RUSAGE_CHILDREN)
        vipsManyRuns.append(try vipsMany())
        vipsCPU.append(processCPUSeconds(RUSAGE_CHILDREN) - vipsStart)
    }
    let ourManySeconds = median(ourManyRuns)
    let vipsManySeconds = median(vipsManyRuns)
    let ourCPUPerThumbnail = median(ourCPU) / Double(files.count) * 1000
    let vipsCPUPerThumbnail = median(vipsCPU) / Double(files.count) * 1000
    let ourRate = Double(files.count) / ourManySeconds
    let vipsRate = Double(files.count) / vipsManySeconds

    return [
        BenchRow(
            name: "images: 24 MP JPEG -> 256 px, own process (median of 5)", value: ourTime * 1000, unit: "ms",
            reference: "vipsthumbnail", referenceValue: vipsTime * 1000, ratio: vipsTime / ourTime,
            target: "≥ 1× vips speed", met: ourTime <= vipsTime),
        BenchRow(
            name: "images: 24 MP JPEG -> 256 px, peak RSS", value: ourRSS, unit: "MiB", reference: "vipsthumbnail",
            referenceValue: vipsRSS, ratio: ourRSS / vipsRSS, target: "≤ vips RSS", met: ourRSS <= vipsRSS),
        BenchRow(
            name: "images: cloudassets image (24 MP -> 256 px, CLI end to end)", value: cliTime * 1000, unit: "ms",
            reference: "vipsthumbnail", referenceValue: vipsTime * 1000, ratio: vipsTime / cliTime,
            target: "≥ 1× vips speed", met: cliTime <= vipsTime),
        BenchRow(
            name: "images: cloudassets image, peak RSS", value: cliRSS, unit: "MiB", reference: "vipsthumbnail",
            referenceValue: vipsRSS, ratio: cliRSS / vipsRSS, target: "≤ vips RSS", met: cliRSS <= vipsRSS),
        BenchRow(
            name: "images: 200 × 12 MP JPEG -> 256 px, 2 threads", value: ourRate, unit: "thumb/s",
            reference: "vipsthumbnail ×2 procs", referenceValue: vipsRate, ratio: ourRate / vipsRate,
            target: "≥ 1× vips", met: ourRate >= vipsRate && failures.withLock { $0 } == 0),
        BenchRow(
            name: "images: 200 × 12 MP JPEG -> 256 px, CPU per thumbnail", value: ourCPUPerThumbnail, unit: "ms",
            reference: "vipsthumbnail ×2 procs", referenceValue: vipsCPUPerThumbnail,
            ratio: ourCPUPerThumbnail / vipsCPUPerThumbnail, target: "≤ vips CPU",
            met: ourCPUPerThumbnail <= vipsCPUPerThumbnail),
    ]
}
