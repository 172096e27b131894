import CloudAssets
import Foundation

extension PhotoApp {
    /// The photo's original bytes, downloaded first when they are not on this computer.
    func original(of photo: Asset) async throws -> Data {
        var options = AssetRequestOptions()
        options.isNetworkAccessAllowed = true  // false: a cloud-only photo fails at once with networkNotAllowed
        options.progressHandler = { fraction, _, _, _ in
            print("downloading \(photo.key): \(Int(fraction * 100))%")
        }
        return try await library.data(for: photo, options: options)
    }

    /// The photo at the size a grid cell draws it: decoded in bounded memory, upright, without its location.
    func cellImage(of photo: Asset, side: Int = 256) async throws -> AssetImage {
        var options = ImageRequestOptions()
        options.isNetworkAccessAllowed = true
        return try await library.image(
            for: photo, targetSize: CGSize(width: side, height: side), contentMode: .aspectFill, options: options)
    }

    /// Whether a request would need the network: the version the photo shows is not all on this computer.
    func needsDownload(_ photo: Asset) -> Bool {
        photo.isInCloud
    }
}
