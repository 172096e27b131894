import AssetStore
import Essentials
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the library keeps bytes, all under its store folder, named by local identifier — never by the
/// remote key, so no key (however hostile: `..`, absolute, NUL, 4 KiB long) can point outside the folder.
///
/// ```
/// <store>/originals/<id>.<ext>         verified originals (state `full`)
/// <store>/originals/<id>.<ext>.part    a download in progress (kept for resume)
/// <store>/originals/import-<uuid>.part  an import being staged (an asset only once its change commits)
/// <store>/partial/<id>.ranges          sparse file of verified byte ranges (state `partial`)
/// <store>/thumbnails/<id>.jpg          thumbnails (state `thumbnail` and above)
/// <store>/thumbnails/<id>.jpg.part     a thumbnail being written
/// <store>/stripped/<id>.<ext>          an original's copy without GPS (location access denied)
/// <store>/stripped/<id>.<ext>.part     such a copy being written
/// <store>/edits/<id>.<revision>.jpg     an edit's rendered version (state `full` of an edited asset)
/// <store>/edits/<id>.<revision>.thumb.jpg  its thumbnail
/// <store>/edits/<id>.<revision>.jpg.part  a rendered version being downloaded
/// <store>/edits/edit-<uuid>.jpg         where an editor writes its output (a revision once committed)
/// ```
struct LocalFiles: Sendable {
    let root: URL
    /// The root's path, without a trailing slash: file URLs are built from strings (~0.7 µs each) rather than by
    /// appending components to a URL (~3 µs for a folder and a name), as every download, import and upload
    /// builds a few.
    private let rootPath: String

    init(root: URL) {
        self.root = root
        let path = root.path
        rootPath = path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Whether `path` names the library's folder or anything inside it, after resolving links and `.`/`..` (a
    /// link from outside into the library counts as inside). False for a path that does not resolve.
    func holds(_ path: String) -> Bool {
        guard let library = Self.realPath(rootPath), let resolved = Self.realPath(path) else { return false }
        return resolved == library || resolved.hasPrefix(library == "/" ? "/" : library + "/")
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    var originalsFolder: URL { url(of: .originals) }
    var partialFolder: URL { url(of: .partial) }
    var thumbnailsFolder: URL { url(of: .thumbnails) }
    var editsFolder: URL { url(of: .edits) }

    /// Creates the folders where absent. A folder that exists as anything but a real directory (a file,
    /// or a symbolic link that could lead out of the library) is refused: the library never writes or removes
    /// through it.
    func createFolders() throws {
        for folder in Folder.allCases.map(url(of:)) {
            var status = stat()
            if lstat(folder.path, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw AssetLibraryError.notALibrary(
                        path: root.path,
                        reason: "\(folder.lastPathComponent) is not a folder of its own (a file or a link)")
                }
                continue
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    /// A short, safe extension taken from the key (letters and digits only), so a verified original keeps a
    /// type other tools recognise.
    static func safeExtension(of key: String) -> String? {
        guard let dot = key.lastIndex(of: "."), !key[dot...].contains("/") else { return nil }
        let ext = key[key.index(after: dot)...]
        guard !ext.isEmpty, ext.count <= 8, ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return nil
        }
        return ext.lowercased()
    }

    // (Every file URL here says it is not a directory: without that, Foundation asks the file system.)
    /// The file `name` in `folder`.
    func file(_ name: String, in folder: Folder) -> URL {
        URL(fileURLWithPath: rootPath + "/" + folder.rawValue + "/" + name, isDirectory: false)
    }

    /// The name of an asset's verified original: its identifier, and the key's extension when it has a safe one.
    static func originalName(id: Int64, key: String) -> String {
        safeExtension(of: key).map { "\(id).\($0)" } ?? "\(id)"
    }

    func original(id: Int64, key: String) -> URL { file(Self.originalName(id: id, key: key), in: .originals) }
    func partial(id: Int64) -> URL { file("\(id).ranges", in: .partial) }
    func thumbnail(id: Int64) -> URL { file("\(id).jpg", in: .thumbnails) }

    /// The original's copy without location data (same name as the original, in `stripped/`).
    func stripped(id: Int64, key: String) -> URL { file(Self.originalName(id: id, key: key), in: .stripped) }

    /// An edit revision's rendered version.
    func rendered(id: Int64, revision: String) -> URL { file("\(id).\(revision).jpg", in: .edits) }

    /// An edit revision's thumbnail.
    func renderedThumbnail(id: Int64, revision: String) -> URL { file("\(id).\(revision).thumb.jpg", in: .edits) }

    /// What of an edit revision is on disk: `full` with its rendered version (`rendered`, or found on disk when
    /// nil), `thumbnail` with only its thumbnail, else `cloudOnly`.
    func editAvailability(id: Int64, revision: String, rendered: Bool? = nil) -> StoredAvailability {
        if rendered ?? (Self.regularFileSize(self.rendered(id: id, revision: revision).path) != nil) { return .full }
        return Self.regularFileSize(renderedThumbnail(id: id, revision: revision).path) != nil ? .thumbnail : .cloudOnly
    }

    /// A fresh file name for an editor's output in the edits folder: `edit-<32 hex digits>.jpg`.
    static func editOutputName() -> String {
        "edit-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() + ".jpg"
    }

    /// The size of a regular file (`lstat`: a link is not followed, and is no file of ours); nil for anything else.
    static func regularFileSize(_ path: String) -> Int64? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// Every file of an asset's edit revisions the library may hold.
    func editPaths(id: Int64, revision: String) -> [String] {
        let rendered = rendered(id: id, revision: revision).path
        return [
            rendered, rendered + ".part", rendered + ".part.json", renderedThumbnail(id: id, revision: revision).path,
        ]
    }

    /// Writes a thumbnail through `<id>.jpg.part` renamed into place: a crash leaves either nothing new or a file
    /// named as the library's own, which recovery removes (never a temporary name it would have to leave alone).
    func writeThumbnail(_ data: Data, id: Int64) throws {
        let final = thumbnail(id: id)
        let part = URL(fileURLWithPath: final.path + ".part")
        try LocalFile.write(data, to: part)
        guard rename(part.path, final.path) == 0 else {
            let code = errno
            unlink(part.path)
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)])
        }
    }

    /// Every file that holds bytes of this asset's original (verified, in progress, ranges, and sidecars).
    func originalPaths(id: Int64, key: String) -> [String] {
        let full = original(id: id, key: key).path
        let ranges = partial(id: id).path
        let copy = stripped(id: id, key: key).path
        return [full, full + ".part", full + ".part.json", ranges, ranges + ".json", copy, copy + ".part"]
    }

    func allPaths(id: Int64, key: String) -> [String] {
        originalPaths(id: id, key: key) + [thumbnail(id: id).path]
    }

    /// The local identifier a file in one of the folders belongs to (its name up to the first dot).
    static func identifier(ofFileNamed name: String) -> Int64? {
        Int64(name.prefix { $0 != "." })
    }

    /// The form a verified original's path is stored in: relative to the library folder (`originals/<name>`),
    /// so the folder can be moved, copied, renamed or reached through another spelling or a link.
    func storedPath(ofOriginal url: URL) -> String { Folder.originals.rawValue + "/" + url.lastPathComponent }

    /// The file a stored path names: a relative path under the library folder. An absolute path (written by an
    /// earlier version) or one that leaves the folder names nothing.
    func url(forStoredPath path: String) -> URL? {
        guard !path.hasPrefix("/"), !path.split(separator: "/").contains("..") else { return nil }
        return URL(fileURLWithPath: rootPath + "/" + path, isDirectory: false)
    }

    /// Whether a file in one of the library's folders has a name the library gives its own files, so recovery
    /// may remove it. Anything else (a user's `my.jpg`, a folder) is never touched.
    static func isLibraryFileName(_ name: String, in folder: Folder) -> Bool {
        if folder == .originals, isStagingName(name) { return true }
        if folder == .edits, isEditOutputName(name) { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, first.allSatisfy(\.isASCII), Int64(first) != nil else {
            return false
        }
        let rest = parts.dropFirst().map(String.init)
        switch folder {
        case .stripped:
            // <id>[.<ext>][.part]
            let tail = rest.last == "part" ? rest.dropLast() : rest[...]
            return tail.count <= 1 && tail.allSatisfy(isSafeExtension)
        case .originals:
            // <id>[.<ext>][.part[.json]]
            var tail = rest[...]
            if tail.suffix(2) == ["part", "json"] {
                tail = tail.dropLast(2)
            } else if tail.last == "part" {
                tail = tail.dropLast()
            }
            return tail.count <= 1 && tail.allSatisfy(isSafeExtension)
        case .partial:
            return rest == ["ranges"] || rest == ["ranges", "json"]
        case .thumbnails:
            return rest == ["jpg"] || rest == ["jpg", "part"]
        case .edits:
            // <id>.<revision>.jpg[.part[.json]] | <id>.<revision>.thumb.jpg
            guard rest.count >= 2, EditRevisionID.isValid(rest[0]) else { return false }
            let tail = Array(rest.dropFirst())
            return tail == ["jpg"] || tail == ["jpg", "part"] || tail == ["jpg", "part", "json"]
                || tail == ["thumb", "jpg"]
        }
    }

    /// An extension as ``safeExtension(of:)`` writes it: 1–8 lower-case ASCII letters and digits.
    private static func isSafeExtension(_ ext: String) -> Bool {
        !ext.isEmpty && ext.count <= 8 && ext.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) }
    }

    /// A fresh name for an import being staged in the originals folder: `import-<32 hex digits>.part`.
    static func stagingName() -> String {
        "import-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() + ".part"
    }

    static func isStagingName(_ name: String) -> Bool {
        guard name.hasPrefix("import-"), name.hasSuffix(".part") else { return false }
        let middle = name.dropFirst("import-".count).dropLast(".part".count)
        return middle.count == 32 && middle.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    /// An editor's output file name (``newEditOutput()``).
    static func isEditOutputName(_ name: String) -> Bool {
        guard name.hasPrefix("edit-"), name.hasSuffix(".jpg") else { return false }
        let middle = name.dropFirst("edit-".count).dropLast(".jpg".count)
        return middle.count == 32 && middle.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    /// The folders the library keeps bytes in (the raw value is the folder's name).
    enum Folder: String, CaseIterable {
        case originals, partial, thumbnails, stripped, edits
    }

    func url(of folder: Folder) -> URL { URL(fileURLWithPath: rootPath + "/" + folder.rawValue, isDirectory: true) }
}
