import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Foundation's file errors (`NSCocoaErrorDomain`, `NSPOSIXErrorDomain`) as `path: reason`.
enum FileSystemErrorText {
    /// `path: reason` for a Foundation or POSIX file error; nil for any other error.
    static func describe(_ error: any Error) -> String? {
        let ns = error as NSError
        guard ns.domain == NSCocoaErrorDomain || ns.domain == NSPOSIXErrorDomain else { return nil }
        let path =
            (ns.userInfo[NSFilePathErrorKey] as? String) ?? (ns.userInfo[NSURLErrorKey] as? URL)?.path
        let reason: String
        if let code = posixCode(of: error) {
            reason = String(cString: strerror(code))
        } else {
            switch ns.code {
            case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue:
                reason = "no such file or folder"
            case CocoaError.fileWriteFileExists.rawValue: reason = "already exists"
            case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue:
                reason = "permission denied"
            case CocoaError.fileWriteOutOfSpace.rawValue: reason = "no space left on the device"
            case CocoaError.fileWriteVolumeReadOnly.rawValue: reason = "read-only file system"
            default: reason = "file operation failed (code \(ns.code))"
            }
        }
        return path.map { "\($0): \(reason)" } ?? reason
    }

    /// The POSIX error code behind a Foundation file error, if it has one.
    static func posixCode(of error: any Error) -> Int32? {
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return Int32(ns.code) }
        guard ns.domain == NSCocoaErrorDomain else { return nil }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return Int32(underlying.code)
        }
        switch ns.code {
        case CocoaError.fileWriteOutOfSpace.rawValue: return ENOSPC
        case CocoaError.fileWriteVolumeReadOnly.rawValue: return EROFS
        case CocoaError.fileReadNoPermission.rawValue, CocoaError.fileWriteNoPermission.rawValue: return EACCES
        case CocoaError.fileWriteFileExists.rawValue: return EEXIST
        case CocoaError.fileNoSuchFile.rawValue, CocoaError.fileReadNoSuchFile.rawValue: return ENOENT
        default: return nil
        }
    }
}
