/// Every fuzz target, by name. `make fuzz` runs each under libFuzzer; `FuzzReplayTests` replays each one's
/// corpus and regression inputs in `make test`.
package enum FuzzCatalog {
    package static let all: [FuzzTarget] = [
        httpDate,
        s3XML,
        listingRoundTrip,
        journalEntry,
        checkpointPart,
        checkpointManifest,
        sidecar,
        editManifest,
        collectionDocument,
        credentials,
        adjustmentData,
        serverRequest,
        awsChunked,
        serverXML,
        byteRange,
        galleryRouter,
        imageMetadata,
        locationStrip,
        heifILOC,
        imageDecode,
        videoMetadata,
    ]

    package static func target(named name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
