import Testing

@testable import CloudAssets

/// The request and download book-keeping as a value (``RequestBook``), driven without tasks or downloads.
@Suite("Request book: lifecycle as a value")
struct RequestBookTests {
    final class Handle {}
    typealias Book = RequestBook<String, Handle>

    @Test("registered, then finished: nothing is left")
    func registerThenFinish() {
        var book = Book()
        let registration = book.register(1, "work")
        #expect(registration == .registered)
        book.finish(1)
        #expect(book.works.isEmpty)
    }

    @Test("an answer before the registration: the registration keeps nothing")
    func finishBeforeRegister() {
        var book = Book()
        book.finish(1)
        let registration = book.register(1, "work")
        #expect(registration == .alreadyFinished)
        #expect(book.works.isEmpty)
        // Remembered once only.
        let again = book.register(1, "again")
        #expect(again == .registered)
    }

    @Test("a cancel before the registration cancels the work as it registers, and its downloads as they start")
    func cancelBeforeRegister() {
        var book = Book()
        let early = book.cancel(1)
        #expect(early.work == nil && early.downloads.isEmpty)
        let cancelAtOnce = book.track(Handle(), asset: 7, request: 1)
        #expect(cancelAtOnce)
        let registration = book.register(1, "work")
        #expect(registration == .cancelNow)
        #expect(book.works.isEmpty)
    }

    @Test("a cancel of a registered request returns its work and its downloads")
    func cancelRegistered() {
        var book = Book()
        _ = book.register(1, "work")
        let handle = Handle()
        let cancelAtOnce = book.track(handle, asset: 7, request: 1)
        #expect(!cancelAtOnce)
        let cancel = book.cancel(1)
        #expect(cancel.work == "work")
        #expect(cancel.downloads.count == 1 && cancel.downloads[0] === handle)
        book.untrack(handle, asset: 7, request: 1)
        #expect(book.downloadsByAsset.isEmpty)
        #expect(book.downloads(forRequest: 1).isEmpty)
    }

    @Test("close returns every work and download; a later registration is cancelled at once")
    func closeCancelsEverything() {
        var book = Book()
        _ = book.register(1, "a")
        _ = book.register(2, "b")
        _ = book.track(Handle(), asset: 5, request: 2)
        let closing = book.close()
        #expect(Set(closing.works) == ["a", "b"])
        #expect(closing.downloads.count == 1)
        let late = book.register(3, "late")
        #expect(late == .cancelNow)
    }
}
