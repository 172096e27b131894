public import Foundation

/// What a video's container says of it: read from its `moov` box (MP4, MOV, M4V, 3GP), never from the media data.
public struct VideoMetadata: Sendable, Hashable {
    /// The presentation's length in seconds (`mvhd`, or `mehd` for a fragmented file); 0 when the file does not say.
    public var duration: Double
    /// The displayed width in pixels: the video track's size with its rotation applied (0 without a video track).
    public var pixelWidth: Int
    /// The displayed height in pixels (rotation applied).
    public var pixelHeight: Int
    /// The clockwise rotation the player applies, from the track's matrix: 0, 90, 180 or 270.
    public var rotation: Int
    /// The video track's sample entry code (`avc1`, `hvc1`, `hev1`, `av01`, `vp09`, `mp4v`, …), nil without one.
    public var codec: String?
    /// Frames per second, from the video track's sample table (or its default sample duration in a fragmented
    /// file); 0 when it cannot be told.
    public var frameRate: Double
    /// When it was recorded: Apple's `com.apple.quicktime.creationdate` (with its time zone), else the movie
    /// header's creation time (UTC); nil when neither is set.
    public var creationDate: Date?
    /// Where it was recorded: `com.apple.quicktime.location.ISO6709`, else the `©xyz` user data; nil when absent.
    public var location: VideoLocation?
    /// The identifier Apple's cameras give the two halves of a Live Photo
    /// (`com.apple.quicktime.content.identifier`, the photo's MakerNote has the same): letters, digits and
    /// hyphens, at most 64; nil when absent or not of that form.
    public var contentIdentifier: String?

    /// Metadata with nothing known.
    public init(
        duration: Double = 0, pixelWidth: Int = 0, pixelHeight: Int = 0, rotation: Int = 0, codec: String? = nil,
        frameRate: Double = 0, creationDate: Date? = nil, location: VideoLocation? = nil,
        contentIdentifier: String? = nil
    ) {
        self.contentIdentifier = contentIdentifier
        self.duration = duration
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.rotation = rotation
        self.codec = codec
        self.frameRate = frameRate
        self.creationDate = creationDate
        self.location = location
    }
}

/// A recording location as ISO 6709 writes it (`+37.3318-122.0312+012.5/`).
public struct VideoLocation: Sendable, Hashable {
    /// Degrees north (negative south), -90…90.
    public var latitude: Double
    /// Degrees east (negative west), -180…180.
    public var longitude: Double
    /// Metres above sea level, when given.
    public var altitude: Double?

    /// A location from its parts.
    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// Parses ISO 6709's decimal-degree form: a signed latitude, a signed longitude, an optional signed altitude,
    /// optionally a trailing `CRS…` part and `/`. Nil for anything else, or for values out of range.
    public init?(iso6709 text: String) {
        var numbers: [Double] = []
        var current = ""
        for character in text.unicodeScalars {
            switch character {
            case "+", "-":
                if !current.isEmpty {
                    guard let value = Double(current) else { return nil }
                    numbers.append(value)
                }
                current = String(character)
            case "0"..."9", ".":
                guard !current.isEmpty else { return nil }
                current.unicodeScalars.append(character)
            case "/", "C":
                // The end, or a coordinate reference system (`CRSWGS_84`) after the numbers.
                if !current.isEmpty {
                    guard let value = Double(current) else { return nil }
                    numbers.append(value)
                    current = ""
                }
                guard let made = Self.make(numbers) else { return nil }
                self = made
                return
            default:
                return nil
            }
            if numbers.count > 3 { return nil }
        }
        if !current.isEmpty {
            guard let value = Double(current) else { return nil }
            numbers.append(value)
        }
        guard let made = Self.make(numbers) else { return nil }
        self = made
    }

    private static func make(_ numbers: [Double]) -> VideoLocation? {
        guard numbers.count == 2 || numbers.count == 3, abs(numbers[0]) <= 90, abs(numbers[1]) <= 180,
            numbers.allSatisfy(\.isFinite)
        else { return nil }
        return VideoLocation(
            latitude: numbers[0], longitude: numbers[1], altitude: numbers.count == 3 ? numbers[2] : nil)
    }
}
