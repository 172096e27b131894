import Testing

@testable import CloudAssets

/// What the guesses by name (media type, image headers, content type) read of a key.
@Suite struct KeyExtensionTests {
    @Test(arguments: [
        ("originals/2024/IMG_0001.JPG", "jpg"), ("a/b.c/photo.HeIc", "heic"), ("trailing.jpeg..", "jpeg"),
        ("no-dot", "no-dot"), ("jpg", "jpg"), ("", ""), ("dir.jpg/file", "jpg/file"), ("x.averylongext", ""),
        ("émigré.PNG", "png"), ("a.jp\u{301}g", "jp\u{301}g"),
    ])
    func theExtensionIsTheLastRunBetweenDotsLowerCased(key: String, expected: String) {
        #expect(KeyExtension.of(key) == expected)
    }

    @Test func guessesReadTheExtensionInAnyCase() {
        #expect(MediaType(guessingFrom: "x/IMG.JPEG") == .image && MediaType(guessingFrom: "clip.MOV") == .video)
        #expect(MediaType(guessingFrom: "notes.txt") == .unknown && MediaType(guessingFrom: "mp3") == .audio)
        #expect(ImageHeaderRead.mayHaveHeaders(key: "a/B.HEIF") && !ImageHeaderRead.mayHaveHeaders(key: "a/b.gif"))
        #expect(!ImageHeaderRead.mayHaveHeaders(key: "a.jpg/readme"))
    }
}
