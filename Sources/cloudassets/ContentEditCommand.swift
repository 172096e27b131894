import ArgumentParser
import CloudAssets
import Foundation

/// `cloudassets edit`: edits images non-destructively with the built-in editor (`com.cloudassets.basic`): the
/// rendered version and the adjustments go to the bucket; the original is never modified.
struct ContentEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Edit images non-destructively (rotate, flip, crop, exposure, contrast, saturation, chroma key).",
        discussion: """
            Without --resume the edit applies to the asset as it shows now (stacking on an earlier edit's \
            rendering). With --resume an earlier com.cloudassets.basic edit is resumed from the original: the \
            options given replace its settings, the others are kept. `cloudassets revert` removes the edit.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: AssetArguments
    @Option(parsing: .unconditional, help: "Rotate clockwise by a multiple of 90 degrees (90, 180, 270, -90).")
    var rotate: Int?
    @Flag(help: "Mirror left-right.") var flipHorizontal = false
    @Flag(help: "Mirror top-bottom.") var flipVertical = false
    @Option(parsing: .unconditional, help: "Keep only x,y,width,height (pixels of the rotated image).")
    var crop: String?
    @Option(parsing: .unconditional, help: "Exposure in EV stops, -4…4.") var exposure: Double?
    @Option(parsing: .unconditional, help: "Contrast, -1…1.") var contrast: Double?
    @Option(parsing: .unconditional, help: "Saturation, -1…1 (-1: greyscale).") var saturation: Double?
    @Option(
        parsing: .unconditional,
        help: "Chroma key: RRGGBB:threshold[:RRGGBB background] (threshold 0…1; background white by default).")
    var chromaKey: String?
    @Flag(help: "Resume the asset's com.cloudassets.basic edit from the original.") var resume = false
    @Flag(help: "Allow downloading the image to edit when it is not local.") var network = false
    @Flag(name: .long, help: "Record only; do not send the edit to the bucket now.") var noWait = false

    func validate() throws {
        // Every value is checked here, so each wrong one is a usage error (2) before anything is done.
        if let rotate, rotate % 90 != 0 {
            throw ValidationError("--rotate must be a multiple of 90 (90, 180, 270, -90), not \(rotate)")
        }
        for (name, value, limit) in [
            ("--exposure", exposure, 4.0), ("--contrast", contrast, 1), ("--saturation", saturation, 1),
        ] {
            if let value, !value.isFinite || !(-limit...limit).contains(value) {
                throw ValidationError("\(name) must be \(Int(-limit))…\(Int(limit)), not \(value)")
            }
        }
        if let crop { _ = try Self.parseCrop(crop) }
        if let chromaKey { _ = try Self.parseChromaKey(chromaKey) }
        if !resume && rotate == nil && !flipHorizontal && !flipVertical && crop == nil && exposure == nil
            && contrast == nil && saturation == nil && chromaKey == nil
        {
            throw ValidationError("give at least one adjustment (--rotate, --crop, --exposure, …) or --resume")
        }
    }

    /// Whether the options change nothing: no `--resume`, a rotation by whole turns (or none), no flip, no crop,
    /// no chroma key, and tone values of 0. Such an edit would make a revision identical to what the asset shows.
    var changesNothing: Bool {
        !resume && (rotate ?? 0) % 360 == 0 && !flipHorizontal && !flipVertical && crop == nil && chromaKey == nil
            && [exposure, contrast, saturation].allSatisfy { ($0 ?? 0) == 0 }
    }

    func run() async throws {
        try await runReportingErrors {
            let library = try await openLibraryForChange(global, noWait: noWait)
            defer { library.close() }
            let targets = try selection.resolve(in: library)
            if changesNothing {
                for asset in targets { Terminal.shared.out("\(asset.localIdentifier)\tnothing to change") }
                return
            }
            for asset in targets {
                let edited = try await withInterrupt {
                    try await library.applyBasicEdit(to: asset, resume: resume, isNetworkAccessAllowed: network) {
                        edit in
                        if let rotate { try edit.setRotation(degrees: rotate) }
                        if flipHorizontal { edit.flipHorizontal.toggle() }
                        if flipVertical { edit.flipVertical.toggle() }
                        if let crop { edit.crop = try Self.parseCrop(crop) }
                        if let exposure { edit.exposure = exposure }
                        if let contrast { edit.contrast = contrast }
                        if let saturation { edit.saturation = saturation }
                        if let chromaKey { edit.chromaKey = try Self.parseChromaKey(chromaKey) }
                    }
                }
                if !global.quiet { Terminal.shared.out("\(edited.localIdentifier)\tedited\t\(edited.key)") }
            }
            try await sendChange(library, noWait: noWait)
        }
    }

    static func parseCrop(_ text: String) throws -> CGRect {
        guard let rect = BasicEdit.crop(parsing: text) else {
            throw ValidationError("--crop takes x,y,width,height in pixels (e.g. 0,0,800,600), not \(text)")
        }
        return rect
    }

    static func parseChromaKey(_ text: String) throws
        -> (key: (UInt8, UInt8, UInt8), threshold: Double, background: (UInt8, UInt8, UInt8))
    {
        func color(_ hex: Substring) -> (UInt8, UInt8, UInt8)? {
            guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
            return (UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, let key = color(parts[0]), let threshold = Double(parts[1]),
            (0...1).contains(threshold), let background = parts.count == 3 ? color(parts[2]) : (255, 255, 255)
        else { throw ValidationError("--chroma-key takes RRGGBB:threshold[:RRGGBB] (e.g. 00ff00:0.3), not \(text)") }
        return (key, threshold, background)
    }
}

/// `cloudassets revert`: removes assets' edits; they show their originals again (here and, once shared, on every
/// library). The originals were never modified.
struct Revert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove assets' edits: show their originals again.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var edit: EditOptions

    func run() async throws {
        try await runReportingErrors {
            let library = try await openLibraryForChange(global, noWait: edit.noWait)
            defer { library.close() }
            let targets = try edit.selection.resolve(in: library, includingTrash: true)
            try await library.performChanges { changes in
                for asset in targets where asset.hasAdjustments { changes.revertAssetContentToOriginal(asset) }
            }
            if !global.quiet {
                for asset in targets {
                    Terminal.shared.out("\(asset.localIdentifier)\t\(asset.hasAdjustments ? "reverted" : "unedited")")
                }
            }
            try await sendChange(library, noWait: edit.noWait)
        }
    }
}
