// The types of the internal modules that appear in the public API, so that `import CloudAssets` is all an app
// writes. Everything else in those modules is `package`: visible to this package's targets, not to apps.
@_exported import struct AssetStore.AssetLocation
@_exported import struct AssetStore.ChangeToken
@_exported import enum AssetStore.MediaType
@_exported import enum S3Transfer.IntegrityChecks
@_exported import enum S3Transfer.NetworkPolicy
@_exported import enum S3Transfer.S3ChecksumAlgorithm
