// The fake S3 server library.
