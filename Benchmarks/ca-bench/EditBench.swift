import Foundation
import Images

// Non-destructive edits (issue 21): rendering a 24 MP JPEG with a quarter turn, +0.5 EV and a central 80 % crop,
// in a child process each (time and that process's own peak RSS through /usr/bin/time), against libvips' `vips`
// doing the same operations on the same file.

/// `ca-bench render IN OUT JSON`: the hidden child mode the edits section measures. Renders IN with the
/// `com.cloudassets.basic` adjustments JSON to OUT (what `cloudassets edit` will do); exits 1 on failure.
func runRenderCommand(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3 else {
        FileHandle.standardError.write(Data("usage: ca-bench render IN OUT ADJUSTMENTS-JSON\n".utf8))
        return 2
    }
    do {
        let adjustments = try BasicAdjustments.decode(
            data: Array(arguments[2].utf8), formatIdentifier: BasicAdjustments.formatIdentifier,
            formatVersion: BasicAdjustments.formatVersion)
        _ = try AdjustmentRenderer.render(source: arguments[0], adjustments: adjustments, to: arguments[1])
        return 0
    } catch {
        FileHandle.standardError.write(Data("ca-bench render: \(arguments[0]): \(error)\n".utf8))
        return 1
    }
}

func runEditBenchmarks() throws -> [BenchRow] {
    let vips = "/usr/bin/vips"
    guard FileManager.default.isExecutableFile(atPath: vips) else {
        return [
            BenchRow(
                name: "edits: skipped (vips not installed: apt-get install libvips-tools)", value: .nan, unit: "",
                reference: "", referenceValue: nil, ratio: nil, target: "", met: true)
        ]
    }
    let scratch = try makeScratch("edits")
    defer { removeScratch(scratch) }
    let (width, height) = (6000, 4000)
    let input = scratch.appendingPathComponent("in-24mp.jpg")
    try writeSampleJPEG(input, width: width, height: height, orientation: 1, seed: 11)
    let ours = productsDirectory.appendingPathComponent("ca-bench").path
    func path(_ name: String) -> String { scratch.appendingPathComponent(name).path }

    // The central 80 % of the rotated image (4000 x 6000 after the quarter turn) is the central 80 % of the
    // source too: x 600 y 400 4800 x 3200 in the source, 400,600 3200 x 4800 after the turn.
    let rotated = BasicAdjustments(
        rotateQuarterTurns: 1, crop: .init(x: 400, y: 600, width: 3200, height: 4800), exposure: 0.5)
    let streamed = BasicAdjustments(crop: .init(x: 600, y: 400, width: 4800, height: 3200), exposure: 0.5)
    // vips has no exposure in linear light in one operation: +0.5 EV is a gain of 2^0.5 on linear light, which
    // on sRGB-encoded values is close to a gain of 2^(0.5 / 2.2) (a pure 2.2 power law; the sRGB curve's linear
    // toe differs in the darkest values). vips' `linear` applies it to the 8-bit values, --uchar clips back.
    let gain = String(format: "%.4f", pow(2, 0.5 / 2.2))
    let vipsRotated: [[String]] = [
        ["crop", input.path, path("t1.v"), "600", "400", "4800", "3200"],
        ["rot", path("t1.v"), path("t2.v"), "d90"],
        ["linear", path("t2.v"), path("vips.jpg[Q=90]"), gain, "0", "--uchar"],
    ]
    let vipsStreamed: [[String]] = [
        ["crop", input.path, path("s1.v"), "600", "400", "4800", "3200"],
        ["linear", path("s1.v"), path("vips-s.jpg[Q=90]"), gain, "0", "--uchar"],
    ]
    func runOurs(_ adjustments: BasicAdjustments, _ output: String) throws -> (seconds: Double, peakRSS: Int64) {
        let json = String(decoding: adjustments.encoded(), as: UTF8.self)
        return try timedRun(ours, ["render", input.path, path(output), json])
    }
    func runVips(_ steps: [[String]]) throws -> (seconds: Double, peakRSS: Int64) {
        var total = 0.0
        var peak: Int64 = 0
        for step in steps {
            let run = try timedRun(vips, step)
            total += run.seconds
            peak = max(peak, run.peakRSS)
        }
        return (total, peak)
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    var rows: [BenchRow] = []
    for (label, adjustments, output, steps, vipsName) in [
        ("rotate 90 + exposure +0.5 + crop 80 %", rotated, "ours.jpg", vipsRotated, "vips crop|rot|linear"),
        ("exposure +0.5 + crop 80 % (streamed)", streamed, "ours-s.jpg", vipsStreamed, "vips crop|linear"),
    ] {
        // One warm-up each, then five alternating runs; medians.
        _ = try runOurs(adjustments, output)
        _ = try runVips(steps)
        var ourRuns: [(seconds: Double, peakRSS: Int64)] = []
        var vipsRuns: [(seconds: Double, peakRSS: Int64)] = []
        for _ in 0..<5 {
            ourRuns.append(try runOurs(adjustments, output))
            vipsRuns.append(try runVips(steps))
        }
        // Both made the same picture size.
        let ourSize = try jpegSize(path(output))
        let vipsOutput = steps.last![2].replacingOccurrences(of: "[Q=90]", with: "")
        let vipsSize = try jpegSize(vipsOutput)
        guard ourSize == vipsSize else { throw BenchError("edits: ours \(ourSize) but vips \(vipsSize)") }
        let ourTime = median(ourRuns.map(\.seconds))
        let vipsTime = median(vipsRuns.map(\.seconds))
        let difference = try meanAbsoluteDifference(path(output), vipsOutput)
        let ourRSS = median(ourRuns.map { Double($0.peakRSS) }) / 1_048_576
        let vipsRSS = median(vipsRuns.map { Double($0.peakRSS) }) / 1_048_576
        rows += [
            BenchRow(
                name: "edits: 24 MP JPEG \(label), own process (median of 5)", value: ourTime * 1000, unit: "ms",
                reference: vipsName, referenceValue: vipsTime * 1000, ratio: vipsTime / ourTime,
                target: "≥ 0.8× vips speed", met: vipsTime / ourTime >= 0.8),
            BenchRow(
                name: "edits: 24 MP JPEG \(label), peak RSS", value: ourRSS, unit: "MiB", reference: vipsName,
                referenceValue: vipsRSS, ratio: ourRSS / vipsRSS, target: "≤ 1.5× vips RSS",
                met: ourRSS <= 1.5 * vipsRSS),
            BenchRow(
                name: "edits: 24 MP JPEG \(label), pixels vs vips' (mean abs. difference, 1/4 scale)",
                value: difference, unit: "/255", reference: vipsName, referenceValue: nil, ratio: nil,
                target: "< 3 (vips' exposure is a gamma-space gain)", met: difference < 3),
        ]
    }
    return rows
}

/// Mean absolute difference per channel of two same-sized JPEGs, both decoded at 1/4 scale.
private func meanAbsoluteDifference(_ a: String, _ b: String) throws -> Double {
    let request = DecodeRequest(targetWidth: 1600, targetHeight: 1600)
    let first = try ImageDecoder.decode(fileAt: a, request: request).image
    let second = try ImageDecoder.decode(fileAt: b, request: request).image
    guard first.width == second.width, first.height == second.height else { return .infinity }
    var total = 0
    for y in 0..<first.height {
        for x in 0..<first.width {
            for c in 0..<3 {
                let i = y * first.bytesPerRow + x * 4 + c
                let j = y * second.bytesPerRow + x * 4 + c
                total += abs(Int(first.pixels[i]) - Int(second.pixels[j]))
            }
        }
    }
    return Double(total) / Double(first.width * first.height * 3)
}

private func jpegSize(_ path: String) throws -> String {
    let head = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    guard case .parsed(let metadata) = try ImageMetadata.parse(head: head, fileLength: head.count) else {
        throw BenchError("edits: cannot read \(path)")
    }
    return "\(metadata.pixelWidth)x\(metadata.pixelHeight)"
}
