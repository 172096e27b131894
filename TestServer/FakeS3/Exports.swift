// The key pair type of the server's configuration, so that `import FakeS3` is all a test or tool writes.
@_exported import struct AWSSigV4.AWSCredentials
