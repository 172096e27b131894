import FakeS3

print("fake-s3: not yet implemented")
