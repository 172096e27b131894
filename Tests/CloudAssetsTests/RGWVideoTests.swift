import CloudAssets
import Foundation
import Testing
import Video

extension RGWInteropTests {
    @Test("another tool's video through the gateway: container and poster by range; a replaced one is not mixed")
    func videoThroughTheGateway() async throws {
        let rgw = try await RGWFixture.gateway()
        try await RGWBucket.with(rgw) { bucket in
            // 12 MiB as phones write it (moov last), written in 5 MiB parts (an ETag that is no MD5).
            let first = SyntheticMovie.make(
                duration: 20, width: 64, height: 48, frameRate: 10, mediaBytes: 12 << 20, movieLast: true,
                location: "+48.8584+002.2945/", decodable: true)
            try bucket.fill(#"multipart("originals/clips/tower.mov", "movie")"#, files: ["movie": Data(first)])
            let library = try await bucket.open()
            try await library.sync(fetchThumbnails: false)
            let clip = try library.asset(path: "clips/tower.mov")
            #expect(clip.mediaType == .video && abs(clip.duration - 20) < 0.01, "\(clip)")
            #expect(clip.pixelWidth == 64 && clip.pixelHeight == 48)
            #expect(clip.availability == .cloudOnly)
            // Location access is denied by default: no place in the catalog, nor in the movie box handed out.
            #expect(clip.location == nil)
            let movieBox = Int64(first.count - 8192)..<Int64(first.count)
            let tail = try await library.read(clip, range: movieBox)
            #expect(tail.count == 8192 && tail.range(of: Data("+48.8584".utf8)) == nil)
            #expect(Data(first[Int(movieBox.lowerBound)...]).range(of: Data("+48.8584".utf8)) != nil)

            guard case .posterFrame(let bytesRead) = try await library.makeThumbnail(for: clip) else {
                Issue.record("no poster frame")
                return
            }
            #expect(bytesRead > 0 && bytesRead < 2 << 20, "\(bytesRead) bytes read of \(first.count)")
            let withPoster = try library.current(clip)
            #expect(withPoster.hasThumbnail && withPoster.availability == .partial)

            // Another tool replaces the video. The library still holds the listed version: a read it needs from
            // the bucket names that version and is refused, never spliced from two files.
            let second = SyntheticMovie.make(
                duration: 8, width: 64, height: 48, frameRate: 10, mediaBytes: 12 << 20, movieLast: true,
                decodable: true)
            try bucket.fill(#"put("originals/clips/tower.mov", "movie")"#, files: ["movie": Data(second)])
            await expectError(.objectChanged) {
                try await library.read(withPoster, range: Int64(6 << 20)..<Int64(6 << 20) + 4096)
            }
            // The next sync takes the new version: its length, and nothing of the old one's bytes.
            try await library.sync(fetchThumbnails: false)
            let replaced = try library.current(clip)
            #expect(abs(replaced.duration - 8) < 0.01, "\(replaced)")
            #expect(replaced.partialRanges.isEmpty)
            var options = ImageRequestOptions()
            options.isNetworkAccessAllowed = true
            let image = try await library.image(
                for: replaced, targetSize: CGSize(width: 32, height: 32), contentMode: .aspectFit, options: options)
            #expect(image.width == 32 && image.height == 24)
        }
    }
}
