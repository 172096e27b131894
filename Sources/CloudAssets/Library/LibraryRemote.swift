import S3Transfer

/// The network side of a library: the S3 client and downloader, when an endpoint is configured.
final class LibraryRemote: Sendable {
    let client: S3Client
    let downloader: Downloader
    let uploader: Uploader

    init(client: S3Client, downloader: Downloader, uploader: Uploader) {
        self.client = client
        self.downloader = downloader
        self.uploader = uploader
    }
}
