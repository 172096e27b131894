import AssetStore
public import Foundation
import Images

/// The built-in editor's settings (adjustment format `com.cloudassets.basic`, version 1), applied in this order:
/// the original's EXIF orientation, ``rotation`` and the flips, ``crop``, then the tone (``exposure``,
/// ``contrast``, ``saturation``) and last the ``chromaKey``. The rendering is upright, without EXIF or GPS.
public struct BasicEdit: Sendable, Hashable {
    var adjustments: BasicAdjustments

    /// No change.
    public init() { adjustments = BasicAdjustments() }

    /// The format identifier the built-in editor writes.
    public static let formatIdentifier = BasicAdjustments.formatIdentifier
    /// The format version it writes and reads.
    public static let formatVersion = BasicAdjustments.formatVersion

    /// Clockwise rotation in degrees, 0, 90, 180 or 270 (set it with ``setRotation(degrees:)``, which refuses
    /// other values).
    public var rotation: Int { adjustments.rotateQuarterTurns * 90 }

    /// Sets the clockwise rotation; refuses a value that is not a multiple of 90 (``CloudAssetsError/Code/cannotEdit``).
    public mutating func setRotation(degrees: Int) throws {
        try CloudAssetsError.boundary {
            adjustments.rotateQuarterTurns = try BasicAdjustments.quarterTurns(degrees: degrees)
        }
    }

    /// Mirror left-right (after the rotation).
    public var flipHorizontal: Bool {
        get { adjustments.flipHorizontal }
        set { adjustments.flipHorizontal = newValue }
    }
    /// Mirror top-bottom (after the rotation).
    public var flipVertical: Bool {
        get { adjustments.flipVertical }
        set { adjustments.flipVertical = newValue }
    }
    /// The kept rectangle, in pixels of the upright, rotated image; nil keeps everything.
    public var crop: CGRect? {
        get { adjustments.crop.map { CGRect(x: $0.x, y: $0.y, width: $0.width, height: $0.height) } }
        set {
            adjustments.crop = newValue.map {
                .init(x: Int($0.minX), y: Int($0.minY), width: Int($0.width), height: Int($0.height))
            }
        }
    }
    /// The crop rectangle a user writes as `x,y,width,height` (pixels; non-negative origin, positive size), or nil
    /// when the text is not one.
    public static func crop(parsing text: String) -> CGRect? {
        // try?: not a crop is nil (documented)
        guard let rect = try? BasicAdjustments.CropRect(argument: text) else { return nil }
        return CGRect(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
    }

    /// Exposure in EV stops (-4…4): linear light times 2^exposure.
    public var exposure: Double {
        get { adjustments.exposure }
        set { adjustments.exposure = newValue }
    }
    /// Contrast around mid-grey (-1…1).
    public var contrast: Double {
        get { adjustments.contrast }
        set { adjustments.contrast = newValue }
    }
    /// Saturation (-1…1; -1 is greyscale).
    public var saturation: Double {
        get { adjustments.saturation }
        set { adjustments.saturation = newValue }
    }
    /// Replaces pixels near `key` (within `threshold`, 0…1 of the largest RGB distance) by `background`.
    public var chromaKey: (key: (UInt8, UInt8, UInt8), threshold: Double, background: (UInt8, UInt8, UInt8))? {
        get {
            adjustments.chromaKey.map {
                (
                    ($0.key.red, $0.key.green, $0.key.blue), $0.threshold,
                    ($0.background.red, $0.background.green, $0.background.blue)
                )
            }
        }
        set {
            adjustments.chromaKey = newValue.map {
                .init(
                    key: .init(red: $0.key.0, green: $0.key.1, blue: $0.key.2), threshold: $0.threshold,
                    background: .init(red: $0.background.0, green: $0.background.1, blue: $0.background.2))
            }
        }
    }

    /// Two edits are equal when every setting is.
    public static func == (a: BasicEdit, b: BasicEdit) -> Bool { a.adjustments == b.adjustments }
    /// Hashes every setting.
    public func hash(into hasher: inout Hasher) { hasher.combine(adjustments) }
}
