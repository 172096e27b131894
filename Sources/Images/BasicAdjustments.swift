import Foundation

/// The built-in adjustment format, `com.cloudassets.basic` version "1": the description of a non-destructive
/// edit that `AdjustmentRenderer` applies to an original to make its rendered version.
///
/// Order of operations (each step works on the result of the one before):
/// 1. EXIF orientation: the original's stored pixels are made upright (orientation 1...8). HEIF originals are
///    already upright (libheif applies irot/imir).
/// 2. `rotateQuarterTurns` clockwise quarter turns of the upright image.
/// 3. `flipHorizontal` (mirror left-right), then `flipVertical` (mirror top-bottom), of the rotated image.
/// 4. `crop`: a rectangle in pixels of the image after steps 1-3.
/// 5. Tone, per pixel on sRGB-encoded 8-bit values: `exposure` (in linear light), then `contrast` (in sRGB
///    gamma space), composed into one 256-entry lookup table; then `saturation` (luma mixing in gamma space).
/// 6. `chromaKey`: pixels whose colour after step 5 is near the key colour are replaced by the background.
///
/// Every field defaults to identity; the default value renders the original unchanged (apart from JPEG
/// re-encoding). The JSON form (`encoded()`) holds only the fields of this version; `decode` refuses any other
/// format identifier or version, unknown fields and out-of-range values, so an edit it cannot apply exactly
/// is never misapplied. A writer adding a field must bump `formatVersion`.
package struct BasicAdjustments: Sendable, Hashable, Codable {
    /// The adjustment data's format identifier (PhotoKit's `formatIdentifier`).
    package static let formatIdentifier = "com.cloudassets.basic"
    /// The one version this build reads and writes.
    package static let formatVersion = "1"

    /// A rectangle in pixels: x and y of its top-left corner, its width and height.
    package struct CropRect: Sendable, Hashable, Codable {
        package var x: Int
        package var y: Int
        package var width: Int
        package var height: Int

        package init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// A crop as a user gives it, `x,y,width,height` (`--crop 10,20,300,200`); throws `.invalidAdjustments`
        /// for anything else (four integers, x and y >= 0, width and height > 0).
        package init(argument: String) throws(ImageError) {
            let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            guard parts.count == 4, let x = parts[0], let y = parts[1], let width = parts[2], let height = parts[3],
                x >= 0, y >= 0, width > 0, height > 0
            else { throw .invalidAdjustments("crop \"\(argument)\" is not x,y,width,height in pixels") }
            self.init(x: x, y: y, width: width, height: height)
        }
    }

    /// An 8-bit sRGB colour.
    package struct RGB: Sendable, Hashable, Codable {
        package var red: UInt8
        package var green: UInt8
        package var blue: UInt8

        package init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }
    }

    /// Replaces the pixels near `key` by `background` (JPEG has no alpha, so keyed pixels are composited onto a
    /// solid colour). A pixel is keyed when its Euclidean RGB distance to `key` is at most `threshold` times the
    /// largest distance there is (black to white, 255 × √3): threshold 0 keys only the exact colour, 1 keys
    /// everything. The edge is hard (no blending).
    package struct ChromaKey: Sendable, Hashable, Codable {
        package var key: RGB
        /// 0...1.
        package var threshold: Double
        package var background: RGB

        package init(key: RGB, threshold: Double, background: RGB) {
            self.key = key
            self.threshold = threshold
            self.background = background
        }
    }

    /// Clockwise quarter turns, 0...3 (see `quarterTurns(degrees:)`).
    package var rotateQuarterTurns: Int = 0
    /// Mirror left-right, after the rotation.
    package var flipHorizontal: Bool = false
    /// Mirror top-bottom, after the rotation and the horizontal flip.
    package var flipVertical: Bool = false
    /// In pixels of the upright image after rotation and flips; nil keeps the whole image.
    package var crop: CropRect? = nil
    /// EV stops, -4...4: linear light (sRGB decoded) is multiplied by 2^exposure, highlights clip at white.
    package var exposure: Double = 0
    /// -1...1: sRGB-encoded values v (0...1) become 0.5 + (v - 0.5) × (1 + contrast); -1 is flat mid-grey, 1
    /// doubles the slope around mid-grey.
    package var contrast: Double = 0
    /// -1...1: each channel c becomes Y + (c - Y) × (1 + saturation), with Y the Rec. 601 luma of the sRGB
    /// values; -1 gives greyscale (R = G = B = Y).
    package var saturation: Double = 0
    /// Applied last; nil for none.
    package var chromaKey: ChromaKey? = nil

    package init(
        rotateQuarterTurns: Int = 0, flipHorizontal: Bool = false, flipVertical: Bool = false,
        crop: CropRect? = nil, exposure: Double = 0, contrast: Double = 0, saturation: Double = 0,
        chromaKey: ChromaKey? = nil
    ) {
        self.rotateQuarterTurns = rotateQuarterTurns
        self.flipHorizontal = flipHorizontal
        self.flipVertical = flipVertical
        self.crop = crop
        self.exposure = exposure
        self.contrast = contrast
        self.saturation = saturation
        self.chromaKey = chromaKey
    }

    /// Clockwise quarter turns for a rotation in degrees as a user gives it (`--rotate 90|180|270|-90`, also 0,
    /// -180, -270 and 360): throws `.invalidAdjustments` for anything that is not a multiple of 90.
    package static func quarterTurns(degrees: Int) throws(ImageError) -> Int {
        guard degrees % 90 == 0, abs(degrees) <= 360 else {
            throw .invalidAdjustments("rotation of \(degrees)° is not a multiple of 90°")
        }
        return ((degrees / 90) % 4 + 4) % 4
    }

    /// Whether the tone and key steps change nothing (then only geometry remains).
    package var hasNoToneOrKey: Bool { exposure == 0 && contrast == 0 && saturation == 0 && chromaKey == nil }

    /// Whether rendering these adjustments gives back the image unchanged (apart from re-encoding).
    package var isIdentity: Bool {
        rotateQuarterTurns == 0 && !flipHorizontal && !flipVertical && crop == nil && hasNoToneOrKey
    }

    // MARK: Validation

    /// Throws `.invalidAdjustments` naming the first value out of its range (rotation 0...3, exposure -4...4,
    /// contrast and saturation -1...1, threshold 0...1, all finite; a crop with a negative origin or an empty
    /// size). Whether the crop fits the image is checked by `validate(uprightWidth:uprightHeight:)`.
    package func validate() throws(ImageError) {
        guard (0...3).contains(rotateQuarterTurns) else {
            throw .invalidAdjustments("rotateQuarterTurns \(rotateQuarterTurns) is outside 0...3")
        }
        func check(_ name: String, _ value: Double, _ range: ClosedRange<Double>) throws(ImageError) {
            guard value.isFinite, range.contains(value) else {
                throw .invalidAdjustments("\(name) \(value) is outside \(range.lowerBound)...\(range.upperBound)")
            }
        }
        try check("exposure", exposure, -4...4)
        try check("contrast", contrast, -1...1)
        try check("saturation", saturation, -1...1)
        if let chromaKey { try check("chromaKey.threshold", chromaKey.threshold, 0...1) }
        if let crop {
            guard crop.x >= 0, crop.y >= 0, crop.width > 0, crop.height > 0 else {
                throw .invalidAdjustments(
                    "crop \(crop.x),\(crop.y) \(crop.width)x\(crop.height) needs x, y >= 0 and a positive size")
            }
        }
    }

    /// The size after rotation and flips of an upright image of `width` x `height` (before the crop).
    package func rotatedSize(uprightWidth width: Int, uprightHeight height: Int) -> (width: Int, height: Int) {
        rotateQuarterTurns % 2 == 1 ? (height, width) : (width, height)
    }

    /// The rendered size for an upright (EXIF-oriented) original of `width` x `height`.
    package func outputSize(uprightWidth width: Int, uprightHeight height: Int) -> (width: Int, height: Int) {
        if let crop { return (crop.width, crop.height) }
        return rotatedSize(uprightWidth: width, uprightHeight: height)
    }

    /// `validate()`, and the crop lies inside the rotated image of an upright original of `width` x `height`;
    /// throws `.invalidAdjustments` otherwise.
    package func validate(uprightWidth width: Int, uprightHeight height: Int) throws(ImageError) {
        try validate()
        guard let crop else { return }
        let rotated = rotatedSize(uprightWidth: width, uprightHeight: height)
        guard crop.x <= rotated.width - crop.width, crop.y <= rotated.height - crop.height else {
            throw .invalidAdjustments(
                "crop \(crop.x),\(crop.y) \(crop.width)x\(crop.height) is outside the rotated image of "
                    + "\(rotated.width)x\(rotated.height)")
        }
    }

    // MARK: Adjustment data

    /// The adjustment data: UTF-8 JSON with sorted keys (stable bytes for equal values), every field written.
    /// Values should be valid (`validate()`); a non-finite number cannot be written, and gives empty data, which
    /// `decode` refuses.
    package func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain integers, booleans, finite doubles and nested structs cannot fail.
        return (try? Array(encoder.encode(self))) ?? []
    }

    /// Reads adjustment data written by `encoded()`.
    ///
    /// Refuses (never guesses): another format identifier or a version other than "1" ->
    /// `.unsupportedAdjustments(formatIdentifier:formatVersion:)`; bytes that are not a JSON object of this
    /// version's fields (wrong types, unknown fields, values out of range) -> `.invalidAdjustments`. Missing
    /// fields are identity.
    package static func decode(
        data: [UInt8], formatIdentifier: String, formatVersion: String
    ) throws(ImageError) -> BasicAdjustments {
        guard formatIdentifier == Self.formatIdentifier, formatVersion == Self.formatVersion else {
            throw .unsupportedAdjustments(formatIdentifier: formatIdentifier, formatVersion: formatVersion)
        }
        let value: BasicAdjustments
        do {
            value = try JSONDecoder().decode(BasicAdjustments.self, from: Data(data))
        } catch let error as ImageError {
            throw error
        } catch {
            throw .invalidAdjustments("not \(Self.formatIdentifier) \(Self.formatVersion) JSON: \(describe(error))")
        }
        try value.validate()
        return value
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default: return "\(error)"
        }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case rotateQuarterTurns, flipHorizontal, flipVertical, crop, exposure, contrast, saturation, chromaKey
    }

    package init(from decoder: any Decoder) throws {
        try Self.refuseUnknownKeys(decoder, known: CodingKeys.allCases.map(\.stringValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rotateQuarterTurns = try container.decodeIfPresent(Int.self, forKey: .rotateQuarterTurns) ?? 0
        flipHorizontal = try container.decodeIfPresent(Bool.self, forKey: .flipHorizontal) ?? false
        flipVertical = try container.decodeIfPresent(Bool.self, forKey: .flipVertical) ?? false
        crop = try container.decodeIfPresent(CropRect.self, forKey: .crop)
        exposure = try container.decodeIfPresent(Double.self, forKey: .exposure) ?? 0
        contrast = try container.decodeIfPresent(Double.self, forKey: .contrast) ?? 0
        saturation = try container.decodeIfPresent(Double.self, forKey: .saturation) ?? 0
        chromaKey = try container.decodeIfPresent(ChromaKey.self, forKey: .chromaKey)
        // The nested objects may not carry unknown fields either.
        if container.contains(.crop), try !container.decodeNil(forKey: .crop) {
            let nested = try container.superDecoder(forKey: .crop)
            try Self.refuseUnknownKeys(nested, known: ["x", "y", "width", "height"])
        }
        if container.contains(.chromaKey), try !container.decodeNil(forKey: .chromaKey) {
            let nested = try container.superDecoder(forKey: .chromaKey)
            try Self.refuseUnknownKeys(nested, known: ["key", "threshold", "background"])
            let colours = try nested.container(keyedBy: AnyKey.self)
            for name in ["key", "background"] {
                try Self.refuseUnknownKeys(
                    colours.superDecoder(forKey: AnyKey(name)), known: ["red", "green", "blue"])
            }
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rotateQuarterTurns, forKey: .rotateQuarterTurns)
        try container.encode(flipHorizontal, forKey: .flipHorizontal)
        try container.encode(flipVertical, forKey: .flipVertical)
        try container.encodeIfPresent(crop, forKey: .crop)
        try container.encode(exposure, forKey: .exposure)
        try container.encode(contrast, forKey: .contrast)
        try container.encode(saturation, forKey: .saturation)
        try container.encodeIfPresent(chromaKey, forKey: .chromaKey)
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static func refuseUnknownKeys(_ decoder: any Decoder, known: [String]) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        let path = decoder.codingPath.map(\.stringValue).joined(separator: ".")
        for key in container.allKeys where !known.contains(key.stringValue) {
            throw ImageError.invalidAdjustments(
                "unknown field \(path.isEmpty ? "" : path + ".")\(key.stringValue) in \(formatIdentifier) "
                    + "version \(formatVersion)")
        }
    }
}
