package import AssetStore
package import Foundation

/// The properties every library on a bucket shares for an asset — favourite, hidden, title, keywords, trash — with
/// the merge rule that makes them converge.
///
/// **The rule: last writer wins, per property.** Each property carries the stamp of its last change: the time in
/// milliseconds and the device that made it. Merging two states keeps, property by property, the value with the
/// later stamp (ties broken by the device identifier, so every library picks the same one). A property set on one
/// device and not touched on another keeps its value whatever the other did to the other properties; when two
/// devices set the same property, the later change wins on both. A device stamps a change later than any stamp it
/// has seen on that property, so a change made after seeing another's always supersedes it. Merging is
/// commutative, associative and idempotent: libraries that have seen the same changes, in any order, agree.
package struct SharedMetadata: Sendable, Hashable {
    package var isFavorite = false
    package var isHidden = false
    package var title: String?
    package var keywords: [String] = []
    package var trashedDate: Date?
    /// The stamp of each property's last change; a property never set has none (older than any stamp).
    package var stamps: [Property: Stamp] = [:]

    /// A property the libraries share.
    package enum Property: String, Sendable, Hashable, CaseIterable, Codable {
        case favorite, hidden, title, keywords, trashed
    }

    /// When and where a property was last set: ordered by time, then device.
    package struct Stamp: Sendable, Hashable, Comparable, Codable {
        /// Milliseconds since 1970.
        package var time: Int64
        /// The device (library) that set it.
        package var device: String

        package init(time: Int64, device: String) {
            self.time = time
            self.device = device
        }

        package static func < (a: Stamp, b: Stamp) -> Bool {
            a.time != b.time ? a.time < b.time : a.device.utf8.lexicographicallyPrecedes(b.device.utf8)
        }
    }

    /// Two states are equal when a sidecar would carry the same: the trash date is compared as present or not
    /// (each library dates a trash by when it learned of it; the stamp is what the libraries share).
    package static func == (a: SharedMetadata, b: SharedMetadata) -> Bool {
        a.isFavorite == b.isFavorite && a.isHidden == b.isHidden && a.title == b.title && a.keywords == b.keywords
            && (a.trashedDate == nil) == (b.trashedDate == nil) && a.stamps == b.stamps
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(isFavorite)
        hasher.combine(isHidden)
        hasher.combine(title)
        hasher.combine(keywords)
        hasher.combine(trashedDate == nil)
        hasher.combine(stamps)
    }

    /// The state as a catalog row holds it.
    package init(record: AssetRecord) {
        isFavorite = record.isFavorite
        isHidden = record.isHidden
        title = record.title
        keywords = record.keywords
        trashedDate = record.trashedDate
        stamps = record.metadataStamps.flatMap(Self.decodeStamps) ?? [:]
    }

    package init() {}

    /// Writes the state into a catalog row (the row's other fields are left alone).
    package func apply(to record: inout AssetRecord) {
        record.isFavorite = isFavorite
        record.isHidden = isHidden
        record.title = title
        record.keywords = keywords
        record.trashedDate = trashedDate
        record.metadataStamps = stamps.isEmpty ? nil : Self.encodeStamps(stamps)
    }

    /// The merge of two states (see the type's rule).
    package func merged(with other: SharedMetadata) -> SharedMetadata {
        var result = self
        for property in Property.allCases {
            guard let theirs = other.stamps[property] else { continue }
            if let mine = stamps[property], !(mine < theirs) { continue }
            result.copy(property, from: other)
            result.stamps[property] = theirs
        }
        return result
    }

    /// Sets one property's value from another state (without its stamp).
    private mutating func copy(_ property: Property, from other: SharedMetadata) {
        switch property {
        case .favorite: isFavorite = other.isFavorite
        case .hidden: isHidden = other.isHidden
        case .title: title = other.title
        case .keywords: keywords = other.keywords
        case .trashed: trashedDate = other.trashedDate
        }
    }

    /// Records a local change of `property` made by `body`, stamped later than now and than any stamp seen on it.
    package mutating func change(
        _ property: Property, device: String, now: Date, _ body: (inout SharedMetadata) -> Void
    ) {
        body(&self)
        let millis = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        stamps[property] = Stamp(time: max(millis, (stamps[property]?.time ?? Int64.min) + 1), device: device)
    }

    // MARK: Stamps in the catalog

    package static func encodeStamps(_ stamps: [Property: Stamp]) -> String {
        let ordered = stamps.sorted { $0.key.rawValue < $1.key.rawValue }
        let fields = ordered.map { "\"\($0.key.rawValue)\":[\($0.value.time),\(jsonString($0.value.device))]" }
        return "{" + fields.joined(separator: ",") + "}"
    }

    package static func decodeStamps(_ text: String) -> [Property: Stamp]? {
        // try?: not stamps this version reads is nil
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return nil
        }
        var result: [Property: Stamp] = [:]
        for (name, value) in object {
            guard let property = Property(rawValue: name), let pair = value as? [Any], pair.count == 2,
                let time = (pair[0] as? NSNumber)?.int64Value, let device = pair[1] as? String
            else { continue }
            result[property] = Stamp(time: time, device: device)
        }
        return result
    }

    package static func jsonString(_ text: String) -> String {
        // try?: encoding an array of one string cannot fail
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data()
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }
}

// MARK: The sidecar object

extension SharedMetadata {
    /// The sidecar object that carries an asset's shared properties in the bucket
    /// (`metadata/<path>.json` for `originals/<path>`):
    ///
    /// ```json
    /// {"format":1,"original":"originals/2026/11/IMG_1.jpg","sha256":"…",
    ///  "properties":{"favorite":{"value":true,"time":1763900000000,"device":"6F1…"},
    ///                "title":{"value":"Beach","time":…,"device":"…"},
    ///                "keywords":{"value":["sea","2026"],…}, "hidden":{…},
    ///                "trashed":{"value":true,…}}}
    /// ```
    /// An asset's trash date is when this library put it in the trash or learned that another library did (the
    /// retention counts from it); the sidecar carries only the flag and its stamp.
    /// Only properties that were ever set appear. It is written with a conditional PUT (`If-Match` its ETag, or
    /// `If-None-Match: *` when there is none) after merging what the bucket holds, so no library overwrites a change
    /// it has not seen.
    package struct Sidecar: Codable {
        package var format = 1
        package var original: String
        package var sha256: String?
        package var properties: [String: Entry]

        package init(format: Int = 1, original: String, sha256: String?, properties: [String: Entry]) {
            self.format = format
            self.original = original
            self.sha256 = sha256
            self.properties = properties
        }

        package struct Entry: Codable {
            package var value: Value
            package var time: Int64
            package var device: String

            package init(value: Value, time: Int64, device: String) {
                self.value = value
                self.time = time
                self.device = device
            }
        }

        /// A property's value: a flag, a text, a list of texts, or null.
        package enum Value: Codable, Hashable {
            case flag(Bool)
            case text(String)
            case list([String])
            case none

            package init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if container.decodeNil() {
                    self = .none
                } else if let flag = try? container.decode(Bool.self) {  // try?: not a flag: tried as text
                    self = .flag(flag)
                } else if let text = try? container.decode(String.self) {  // try?: not text: a list, or thrown
                    self = .text(text)
                } else {
                    self = .list(try container.decode([String].self))
                }
            }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .flag(let flag): try container.encode(flag)
                case .text(let text): try container.encode(text)
                case .list(let list): try container.encode(list)
                case .none: try container.encodeNil()
                }
            }
        }
    }

    /// The sidecar for this state.
    package func sidecar(originalKey: String, sha256: String?) -> Sidecar {
        var properties: [String: Sidecar.Entry] = [:]
        for (property, stamp) in stamps {
            let value: Sidecar.Value
            switch property {
            case .favorite: value = .flag(isFavorite)
            case .hidden: value = .flag(isHidden)
            case .title: value = title.map(Sidecar.Value.text) ?? .none
            case .keywords: value = .list(keywords)
            case .trashed: value = .flag(trashedDate != nil)
            }
            properties[property.rawValue] = Sidecar.Entry(value: value, time: stamp.time, device: stamp.device)
        }
        return Sidecar(original: originalKey, sha256: sha256, properties: properties)
    }

    /// The state a sidecar holds; properties of unknown name or with a value of the wrong kind are skipped (a
    /// newer format's additions are not lost: they are simply not merged). A trash is dated `learnedAt` (when
    /// this library learned of it) unless its stamp is later: the trash retention counts from when this library
    /// knew, never from a stamp another writer chose. Sidecars read from the bucket come through
    /// ``BucketInput/sharedMetadata(_:originalKey:now:learnedAt:)``, which validates them first.
    package init(sidecar: Sidecar, learnedAt: Date) {
        self.init()
        for (name, entry) in sidecar.properties {
            guard let property = Property(rawValue: name) else { continue }
            switch (property, entry.value) {
            case (.favorite, .flag(let flag)): isFavorite = flag
            case (.hidden, .flag(let flag)): isHidden = flag
            case (.title, .text(let text)): title = text
            case (.title, .none): title = nil
            case (.keywords, .list(let list)): keywords = list.map(AssetRecord.normalizedKeyword).filter { !$0.isEmpty }
            case (.trashed, .flag(let trashed)):
                trashedDate = trashed ? max(Self.date(ofStamp: entry.time), learnedAt) : nil
            default: continue
            }
            stamps[property] = Stamp(time: entry.time, device: entry.device)
        }
    }

    /// The sidecar's bytes (keys sorted, so equal states give equal bytes).
    package static func encode(_ sidecar: Sidecar) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // try?: encoding these string and number fields cannot fail
        return (try? encoder.encode(sidecar)) ?? Data()
    }

    /// A sidecar read from the bucket; `nil` when it is not one (it is then treated as absent and overwritten
    /// only by a conditional write against its ETag).
    package static func decode(_ data: Data) -> Sidecar? {
        // try?: not a sidecar is nil, treated as absent (documented)
        guard let sidecar = try? JSONDecoder().decode(Sidecar.self, from: data), sidecar.format == 1 else {
            return nil
        }
        return sidecar
    }

    package static let isoStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The date a stamp's time stands for.
    package static func date(ofStamp millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
