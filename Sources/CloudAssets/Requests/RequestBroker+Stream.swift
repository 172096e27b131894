import AssetStore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension RequestBroker {
    /// ``AssetLibrary/streamData(for:options:chunkSize:dataReceivedHandler:)``.
    func streamData(
        for asset: Asset, options: AssetRequestOptions, chunkSize: Int, dataReceivedHandler: (Data) throws -> Void
    ) async throws {
        guard let record = try catalog.store.record(id: asset.rowID) else {
            throw AssetRequestError.assetDeleted(localIdentifier: asset.rowID)
        }
        let chunk = max(4096, chunkSize)
        if options.version == .current, record.editRevision != nil {
            // An edit's rendered version: whole and checked against its digest before any byte is handed on.
            let url = try await requestFile(for: asset, options: options)
            let tail = try FileTail(path: url.path, key: record.key)
            try tail.pump(chunkSize: chunk, handler: dataReceivedHandler)
            return
        }
        if stripsLocation(of: record) {
            // Location access denied: the GPS tags sit in the first bytes, so nothing is handed on before the
            // whole original is here and its copy without them is made.
            let url = try await requestFile(for: asset, options: options)
            let tail = try FileTail(path: url.path, key: record.key)
            try tail.pump(chunkSize: chunk, handler: dataReceivedHandler)
            try tail.finish(expectedSize: record.size)
            return
        }
        if let url = cache.verifiedOriginal(of: record) {
            let tail = try FileTail(path: url.path, key: record.key)
            try tail.pump(chunkSize: chunk, handler: dataReceivedHandler)
            try tail.finish(expectedSize: record.size)
            return
        }
        let (ticks, ticker) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var downloadOptions = options
        let userProgress = options.progressHandler
        downloadOptions.progressHandler = { fraction, error, stop, progress in
            userProgress?(fraction, error, &stop, progress)
            ticker.yield()
        }
        let partPath = files.original(id: asset.rowID, key: record.key).path + ".part"
        let requestID = cache.nextRequestID()
        let download = Task {
            defer { ticker.finish() }
            return try await self.cache.ensureOriginal(
                assetID: asset.rowID, options: downloadOptions, requestID: requestID)
        }
        try await withTaskCancellationHandler {
            var tail: FileTail?
            do {
                for await _ in ticks {
                    if tail == nil { tail = try FileTail.openingIfPresent(partPath, key: record.key) }
                    try tail?.pump(chunkSize: chunk, handler: dataReceivedHandler)
                }
                let url = try await download.value
                // The part file was renamed into place: the same file, unless the download started over in a
                // new one (then nothing may have been handed on yet).
                var final = tail
                if let current = tail, try !current.isSameFile(as: url.path) {
                    if current.sent > 0 { throw AssetRequestError.objectChanged(key: record.key) }
                    final = nil
                }
                let reader = try final ?? FileTail(path: url.path, key: record.key)
                try reader.pump(chunkSize: chunk, handler: dataReceivedHandler)
                try reader.finish(expectedSize: record.size)
            } catch {
                download.cancel()
                _ = await download.result
                throw error
            }
        } onCancel: {
            download.cancel()
            self.cache.cancelDownloads(forRequest: requestID)
        }
    }
}

/// Reads a file that is being written sequentially, from where the last read stopped to its current end.
final class FileTail {
    private let fd: Int32
    let path: String
    let key: String
    /// Bytes handed on so far (the file's first `sent` bytes).
    private(set) var sent: Int64 = 0

    init(path: String, key: String) throws {
        guard let opened = try Self.open(path) else {
            throw AssetRequestError.localFile(path: path, reason: "the file is gone")
        }
        fd = opened
        self.path = path
        self.key = key
    }

    /// `nil` while the file does not exist yet.
    static func openingIfPresent(_ path: String, key: String) throws -> FileTail? {
        guard let opened = try open(path) else { return nil }
        return FileTail(fd: opened, path: path, key: key)
    }

    private init(fd: Int32, path: String, key: String) {
        self.fd = fd
        self.path = path
        self.key = key
    }

    private static func open(_ path: String) throws -> Int32? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw AssetRequestError.localFile(path: path, reason: String(cString: strerror(errno)))
        }
        return fd
    }

    deinit { close(fd) }

    /// Hands on everything between what was sent and the file's current end. A file that became shorter than
    /// what was sent was started over (another version): ``CloudAssetsError/Code/objectChanged``.
    func pump(chunkSize: Int, handler: (Data) throws -> Void) throws {
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw AssetRequestError.localFile(path: path, reason: String(cString: strerror(errno)))
        }
        let end = Int64(status.st_size)
        if end < sent { throw AssetRequestError.objectChanged(key: key) }
        var buffer = Data(count: chunkSize)
        while sent < end {
            let want = Int(min(Int64(chunkSize), end - sent))
            let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(sent)) }
            guard count > 0 else {
                if count == 0 { throw AssetRequestError.objectChanged(key: key) }  // truncated under us
                throw AssetRequestError.localFile(path: path, reason: String(cString: strerror(errno)))
            }
            try handler(count == chunkSize ? buffer : buffer.prefix(count))
            sent += Int64(count)
        }
    }

    /// Whether `path` names the file this tail reads.
    func isSameFile(as other: String) throws -> Bool {
        var mine = stat()
        var theirs = stat()
        guard fstat(fd, &mine) == 0, stat(other, &theirs) == 0 else { return false }
        return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino
    }

    /// Checks that exactly the whole original was handed on.
    func finish(expectedSize: Int64) throws {
        guard sent == expectedSize else {
            throw AssetRequestError.localFile(
                path: path, reason: "handed on \(sent) bytes of an original of \(expectedSize)")
        }
    }
}
