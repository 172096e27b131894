import Testing

@testable import Images
