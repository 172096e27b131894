/// An item of the app's own toolbar in the gallery and picker (the seed article's toolbar on the system image
/// picker): a button that stays on every view the page navigates to — the library, an album, a smart album, a
/// folder of keys — and calls the app back with the current selection when tapped.
public struct GalleryToolbarItem: Sendable, Hashable {
    /// What the app's callback receives (``GalleryToolbarAction/identifier``): 1 to 64 of `A-Z a-z 0-9 . _ -`.
    public var identifier: String
    /// The button's text: 1 to 100 characters, no control characters.
    public var title: String
    /// The fewest assets that must be selected for the button to be enabled (0: always enabled).
    public var minimumSelection: Int

    /// An item enabled once `minimumSelection` assets (default 1) are selected.
    public init(identifier: String, title: String, minimumSelection: Int = 1) {
        self.identifier = identifier
        self.title = title
        self.minimumSelection = minimumSelection
    }

    /// Why the item cannot be shown, or `nil` when it can.
    var problem: String? {
        let allowed = identifier.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0))
        }
        if identifier.isEmpty || identifier.count > 64 || !allowed {
            return "toolbar item \"\(identifier)\": an identifier is 1 to 64 of A-Z a-z 0-9 . _ -"
        }
        if title.isEmpty || title.count > 100
            || title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            return "toolbar item \(identifier): a title is 1 to 100 characters without control characters"
        }
        if minimumSelection < 0 { return "toolbar item \(identifier): minimumSelection must be 0 or more" }
        return nil
    }
}

/// A tap on one of the app's toolbar items.
public struct GalleryToolbarAction: Sendable, Hashable {
    /// The item's ``GalleryToolbarItem/identifier``.
    public let identifier: String
    /// The local identifiers of the selected assets, in the order they were selected (the picker's selection; in
    /// the gallery, the asset in focus), each an asset of the library when the tap arrived.
    public let selection: [String]
}
