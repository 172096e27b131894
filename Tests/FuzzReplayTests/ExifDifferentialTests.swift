import Foundation
import FuzzTargets
import Images
import TestSupport
import Testing

/// The `image-metadata` target's inputs (its seeds, committed corpus and regressions) read by exiftool and by
/// `ImageMetadata.parse`: where exiftool reads an EXIF orientation, capture date or GPS position, ours is the same.
///
/// Intentional differences, each checked below where it applies:
/// - EXIF that does not read (an IFD or value outside the data, an IFD loop, a tag of an unexpected type) is
///   refused whole rather than read in part: a JPEG or PNG throws, a HEIF keeps its size but no EXIF field.
///   exiftool reports what it could read (with warnings). Such files, and those whose headers do not read, are
///   not compared: whether our reader refuses the EXIF is decided by reading the TIFF block exiftool extracts
///   (`-b -EXIF`) on its own, in a minimal JPEG.
/// - Only the EXIF before the image data is read: a JPEG's first APP1 "Exif" segment before the frame header
///   (SOF), a PNG's first eXIf chunk before IDAT. exiftool also reads EXIF after them.
/// - Only IFD0's Orientation, the Exif IFD's DateTimeOriginal/OffsetTimeOriginal/OffsetTime, IFD0's DateTime
///   (exiftool's ModifyDate) and the GPS IFD are read (exiftool names these groups IFD0, ExifIFD, GPS); the same
///   tags in other IFDs and XMP are not.
/// - Of a tag written twice in one IFD, the last is read, as exiftool reads it.
/// - exiftool drops a value it finds at an offset it calls suspicious (its warning "Suspicious … offset for
///   TAG"), and stops reading a GPS IFD after too many bad entries ("GPS parsing aborted"); ours reads any value
///   that lies within the block. Such files (any of their warnings, not only the first) are not compared.
/// - HEIF: the orientation is 1 (libheif applies the file's irot/imir; the EXIF tag does not apply).
/// - Orientation: a value outside 1...8 is reported as 1; of several values, the first is read.
/// - Dates: the first 19 characters must be "YYYY:MM:DD HH:MM:SS" (or with "T") naming a real date and time,
///   else DateTime is used; an offset is "+HH:MM"/"-HH:MM" of at most 14 hours, else the time is UTC.
/// - GPS: no position unless latitude and longitude both read as numbers (exiftool gives "" for a zero
///   denominator), their references are absent or exactly N/S and E/W (spaces aside: a hemisphere is not
///   guessed), and they lie within ±90 and ±180.
@Suite(.heavy) struct ExifDifferentialTests {
    static let exiftool: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/exiftool" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    static let tags = [
        "-Orientation", "-DateTimeOriginal", "-OffsetTimeOriginal", "-ModifyDate", "-OffsetTime", "-GPSLatitude",
        "-GPSLatitudeRef", "-GPSLongitude", "-GPSLongitudeRef", "-Warning",
    ]

    /// Every input of the target, by where it came from.
    static func inputs() throws -> [(origin: String, bytes: [UInt8])] {
        let target = try #require(FuzzCatalog.target(named: "image-metadata"))
        var inputs = target.seeds().enumerated().map { ("seed \($0.offset)", $0.element) }
        for folder in FuzzFiles.committedFolders(of: target, packageRoot: FuzzReplayTests.packageRoot) {
            for file in FuzzFiles.inputs(at: folder) {
                inputs.append((file.path, [UInt8](try Data(contentsOf: file))))
            }
        }
        return inputs
    }

    /// exiftool's answers (`-j -n -a -G1`: numbers unconverted, every group's copy, named by group) and the
    /// EXIF (TIFF) block it finds, by index.
    static func runExiftool(_ executable: String, on inputs: [[UInt8]]) throws -> (
        records: [Int: [String: Any]], blocks: [Int: [UInt8]]
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("exif-diff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for (index, bytes) in inputs.enumerated() {
            let path = folder.appendingPathComponent(String(index)).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        func run(_ arguments: [String]) throws -> Data {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        let json = try run(["-j", "-n", "-a", "-G1", "-q", "-q"] + tags + paths)
        let records = (try? JSONSerialization.jsonObject(with: json)) as? [[String: Any]] ?? []
        var byIndex: [Int: [String: Any]] = [:]
        for record in records {
            guard let source = record["SourceFile"] as? String,
                let index = Int(URL(fileURLWithPath: source).lastPathComponent)
            else { continue }
            byIndex[index] = record
        }
        // Every warning of each file (the JSON above keeps only the first): as "ExifTool:Warnings".
        let warnings = try run(["-j", "-a", "-G1:4", "-q", "-q", "-Warning"] + paths)
        for record in (try? JSONSerialization.jsonObject(with: warnings)) as? [[String: Any]] ?? [] {
            guard let source = record["SourceFile"] as? String,
                let index = Int(URL(fileURLWithPath: source).lastPathComponent)
            else { continue }
            byIndex[index]?["ExifTool:Warnings"] = record.filter { $0.key.hasSuffix(":Warning") }.compactMap {
                $0.value as? String
            }
        }
        // Each file's EXIF block, written next to it as N.exif.
        _ = try run(["-q", "-q", "-b", "-EXIF", "-w", "%d%f.exif"] + paths)
        var blocks: [Int: [UInt8]] = [:]
        for index in inputs.indices {
            if let block = FileManager.default.contents(atPath: folder.appendingPathComponent("\(index).exif").path) {
                blocks[index] = [UInt8](block)
            }
        }
        return (byIndex, blocks)
    }

    /// Whether `ImageMetadata` reads a TIFF block, put in a minimal JPEG (APP1 "Exif", then a 1x1 frame header).
    static func readsEXIF(_ tiff: [UInt8]) -> Bool {
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        guard payload.count + 2 <= 0xFFFF else { return false }
        let jpeg: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
            + [0xFF, 0xC0, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x11, 0]
        guard case .parsed? = try? ImageMetadata.parse(head: jpeg, fileLength: jpeg.count) else { return false }
        return true
    }

    @Test(
        "where exiftool reads an orientation, date or position, ImageMetadata reads the same",
        .enabled(if: exiftool != nil, "exiftool is not installed (scripts/install-deps.sh installs it)"))
    func agreesWithExiftool() throws {
        let inputs = try Self.inputs()
        let answers = try Self.runExiftool(Self.exiftool!, on: inputs.map(\.bytes))
        var compared = 0
        for (index, input) in inputs.enumerated() {
            guard let record = answers.records[index] else { continue }
            let exif = ExiftoolFields(record)
            guard exif.hasAny else { continue }
            // A value exiftool found and dropped as suspicious, or a GPS IFD it gave up on: no reference to compare
            // with.
            let warnings = record["ExifTool:Warnings"] as? [String] ?? []
            if warnings.contains(where: { $0.hasPrefix("Suspicious") || $0.contains("parsing aborted") }) { continue }
            guard
                case .parsed(let metadata) = try? ImageMetadata.parse(head: input.bytes, fileLength: input.bytes.count)
            else { continue }  // refused whole
            guard let block = answers.blocks[index], Self.readsEXIF(block) else { continue }  // EXIF refused
            guard EXIFPlacement.readable(input.bytes, format: metadata.format) else { continue }
            compared += 1
            for problem in exif.disagreements(with: metadata) {
                Issue.record("\(input.origin): \(problem)")
            }
        }
        // The seeds alone have a dozen files with EXIF; the test is not vacuous.
        #expect(compared >= 10, "only \(compared) inputs compared")
    }
}

/// What exiftool read from the groups ours reads.
struct ExiftoolFields {
    var orientation: String?
    var dateTimeOriginal: String?
    var offsetTimeOriginal: String?
    var modifyDate: String?
    var offsetTime: String?
    var latitude: String?
    var latitudeRef: String?
    var longitude: String?
    var longitudeRef: String?

    init(_ record: [String: Any]) {
        func text(_ key: String) -> String? {
            switch record[key] {
            case let value as String: return value
            case let value as NSNumber: return value.stringValue
            default: return nil
            }
        }
        orientation = text("IFD0:Orientation")
        dateTimeOriginal = text("ExifIFD:DateTimeOriginal")
        offsetTimeOriginal = text("ExifIFD:OffsetTimeOriginal")
        modifyDate = text("IFD0:ModifyDate")
        offsetTime = text("ExifIFD:OffsetTime")
        latitude = text("GPS:GPSLatitude")
        latitudeRef = text("GPS:GPSLatitudeRef")
        longitude = text("GPS:GPSLongitude")
        longitudeRef = text("GPS:GPSLongitudeRef")
    }

    var hasAny: Bool {
        [orientation, dateTimeOriginal, modifyDate, latitude, longitude].contains { $0 != nil }
    }

    func disagreements(with metadata: ImageMetadata) -> [String] {
        var problems: [String] = []
        // Orientation: the first value; outside 1...8 (or none) is 1.
        if metadata.format != .heif {
            let first = orientation?.split(separator: " ").first.flatMap { Int($0) }
            let expected = first.map { (1...8).contains($0) ? $0 : 1 } ?? 1
            if metadata.orientation != expected {
                problems.append("orientation \(metadata.orientation); exiftool \(orientation ?? "none")")
            }
        }
        // The capture date: DateTimeOriginal at its offset, else DateTime at its own.
        let expectedDate =
            Self.instant(dateTimeOriginal, offset: offsetTimeOriginal) ?? Self.instant(modifyDate, offset: offsetTime)
        if metadata.captureDate != expectedDate {
            problems.append(
                "capture date \(metadata.captureDate as Any); exiftool \(dateTimeOriginal ?? "none") "
                    + "\(offsetTimeOriginal ?? ""), \(modifyDate ?? "none") \(offsetTime ?? "")")
        }
        // The position.
        let expectedLocation = Self.position(latitude, latitudeRef, north: "N", south: "S", limit: 90).flatMap {
            latitude in
            Self.position(longitude, longitudeRef, north: "E", south: "W", limit: 180).map { (latitude, $0) }
        }
        switch (metadata.location, expectedLocation) {
        case (nil, nil): break
        case (let location?, let expected?)
        where abs(location.latitude - expected.0) < 1e-6 && abs(location.longitude - expected.1) < 1e-6:
            break
        default:
            problems.append(
                "location \(metadata.location.map { "\($0.latitude), \($0.longitude)" } ?? "none"); exiftool "
                    + "\(latitude ?? "none") \(latitudeRef ?? "") \(longitude ?? "none") \(longitudeRef ?? "")")
        }
        return problems
    }

    /// A signed coordinate from exiftool's unsigned degrees and its reference, or nil.
    static func position(_ value: String?, _ reference: String?, north: String, south: String, limit: Double)
        -> Double?
    {
        guard let value, let degrees = Double(value), degrees.isFinite else { return nil }
        let ref = reference.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " ")) }
        let signed: Double
        switch ref {
        case nil, north?: signed = degrees
        case south?: signed = -degrees
        default: return nil
        }
        return abs(signed) <= limit ? signed : nil
    }

    /// "YYYY:MM:DD HH:MM:SS" (the first 19 characters; "T" may separate) at "+HH:MM", counted day by day
    /// from 1970 (not the way `ExifDate` counts).
    static func instant(_ text: String?, offset: String?) -> Date? {
        guard let text else { return nil }
        let c = Array(text.utf8)
        guard c.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            let digits = c[range]
            guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(String(decoding: digits, as: UTF8.self))
        }
        let colon = UInt8(ascii: ":")
        guard c[4] == colon, c[7] == colon, c[10] == UInt8(ascii: " ") || c[10] == UInt8(ascii: "T"),
            c[13] == colon, c[16] == colon, let year = number(0..<4), let month = number(5..<7),
            let day = number(8..<10), let hour = number(11..<13), let minute = number(14..<16),
            let second = number(17..<19)
        else { return nil }
        func isLeap(_ y: Int) -> Bool { y % 400 == 0 || (y % 4 == 0 && y % 100 != 0) }
        let monthLengths = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), day >= 1, day <= monthLengths[month - 1], hour < 24, minute < 60,
            second <= 60
        else { return nil }
        var days = 0
        for y in min(year, 1970)..<max(year, 1970) { days += (year < 1970 ? -1 : 1) * (isLeap(y) ? 366 : 365) }
        days += monthLengths[0..<(month - 1)].reduce(0, +) + day - 1
        var seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        if let offset, let shift = Self.offsetSeconds(offset) { seconds -= shift }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// "+HH:MM" / "-HH:MM" (the first 6 characters), at most 14 hours, in seconds east of UTC.
    static func offsetSeconds(_ text: String) -> Int? {
        let c = Array(text.utf8)
        guard c.count >= 6, c[0] == UInt8(ascii: "+") || c[0] == UInt8(ascii: "-"), c[3] == UInt8(ascii: ":"),
            let hours = Int(String(decoding: c[1..<3], as: UTF8.self)),
            c[1..<3].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let minutes = Int(String(decoding: c[4..<6], as: UTF8.self)),
            c[4..<6].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            hours <= 14, minutes < 60
        else { return nil }
        return (c[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }
}

/// Where a file keeps its EXIF, walked here independently of the module's parsers.
enum EXIFPlacement {
    /// Whether the file's first EXIF block lies where `ImageMetadata` reads it (JPEG: an APP1 "Exif" segment before
    /// the frame header; PNG: an eXIf chunk before IDAT), or the file has none that exiftool could read elsewhere.
    /// HEIF: always (libheif finds the item).
    static func readable(_ bytes: [UInt8], format: ImageFormat) -> Bool {
        switch format {
        case .jpeg: return jpegExifBeforeFrame(bytes)
        case .png: return pngExifBeforeData(bytes)
        case .heif: return true
        }
    }

    /// Segments from SOI: true when an APP1 "Exif\0\0" comes before the first SOF (or when the walk finds
    /// neither: nothing is out of place).
    static func jpegExifBeforeFrame(_ b: [UInt8]) -> Bool {
        var i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xFF {
                i += 1
                continue
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                i += 2
                continue
            }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) { return false }
            if marker == 0xE1, length >= 8, i + 10 <= b.count,
                b[(i + 4)..<(i + 10)].elementsEqual(Array("Exif".utf8) + [0, 0])
            {
                return true
            }
            if marker == 0xDA || marker == 0xD9 { return false }
            i += 2 + length
        }
        return false
    }

    /// Chunks from the signature: true when an eXIf chunk comes before IDAT.
    static func pngExifBeforeData(_ b: [UInt8]) -> Bool {
        var i = 8
        while i + 8 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            if type == "eXIf" { return true }
            if type == "IDAT" || type == "IEND" { return false }
            i += 12 + length
        }
        return false
    }
}
