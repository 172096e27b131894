"""Drives a running fake S3 server with boto3; exits non-zero on the first failed check.

Usage: python3 boto3_interop.py ENDPOINT ACCESS_KEY SECRET_KEY BUCKET
Run by Tests/FakeS3Tests/InteropTests.swift against an in-process server.
"""
import hashlib
import io
import sys
import urllib.request

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, access_key, secret_key, bucket = sys.argv[1:5]


def client(secret=secret_key, **config):
    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access_key, aws_secret_access_key=secret,
        region_name="us-east-1", config=Config(signature_version="s3v4", **config))


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


s3 = client()

# Put / get / head with metadata; newer boto3 adds CRC32 checksums (and aws-chunked bodies) by default.
body = bytes(range(256)) * 40
s3.put_object(Bucket=bucket, Key="boto/a b+c.bin", Body=body, Metadata={"pixel-width": "640"},
              ContentType="image/png")
got = s3.get_object(Bucket=bucket, Key="boto/a b+c.bin")
check(got["Body"].read() == body, "put_object then get_object returns the bytes")
head = s3.head_object(Bucket=bucket, Key="boto/a b+c.bin")
check(head["Metadata"] == {"pixel-width": "640"}, "head_object returns x-amz-meta-*")
check(head["ContentLength"] == len(body), "head_object returns Content-Length")
check(head["ETag"] == '"%s"' % hashlib.md5(body).hexdigest(), "ETag is the MD5")

# Explicit checksums.
s3.put_object(Bucket=bucket, Key="boto/crc.bin", Body=b"hello world", ChecksumAlgorithm="CRC32")
crc = s3.head_object(Bucket=bucket, Key="boto/crc.bin", ChecksumMode="ENABLED").get("ChecksumCRC32")
check(crc == "DUoRhQ==", "CRC32 checksum stored and returned with checksum mode")
s3.put_object(Bucket=bucket, Key="boto/sha.bin", Body=b"hello world", ChecksumAlgorithm="SHA256")
check(s3.get_object(Bucket=bucket, Key="boto/sha.bin")["Body"].read() == b"hello world", "SHA256 checksum upload")

# Ranged get.
ranged = s3.get_object(Bucket=bucket, Key="boto/a b+c.bin", Range="bytes=10-19")
check(ranged["Body"].read() == body[10:20], "ranged get_object")
check(ranged["ContentRange"] == "bytes 10-19/%d" % len(body), "Content-Range of a ranged get")

# Multipart through the transfer manager.
big = (b"0123456789abcdef" * 65536) * 11  # 11 MiB
config = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024)
s3.upload_fileobj(io.BytesIO(big), bucket, "boto/big.bin", Config=config)
out = io.BytesIO()
s3.download_fileobj(bucket, "boto/big.bin", out, Config=config)
check(out.getvalue() == big, "multipart upload and ranged multipart download round-trip")
check(s3.head_object(Bucket=bucket, Key="boto/big.bin")["ETag"].endswith('-3"'), "multipart ETag has -3")

# Copy, list with pagination, delete_objects.
s3.copy_object(Bucket=bucket, Key="boto/copy.bin", CopySource={"Bucket": bucket, "Key": "boto/a b+c.bin"})
check(s3.get_object(Bucket=bucket, Key="boto/copy.bin")["Body"].read() == body, "copy_object")
keys = []
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="boto/", PaginationConfig={"PageSize": 2}):
    keys += [o["Key"] for o in page.get("Contents", [])]
check(keys == sorted(keys) and "boto/a b+c.bin" in keys and len(keys) == 5, "paginated list_objects_v2")
deleted = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "boto/copy.bin"}, {"Key": "boto/sha.bin"}]})
check(len(deleted.get("Deleted", [])) == 2, "delete_objects")

# Presigned URL (SigV4) fetched with a plain HTTP client.
url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "boto/a b+c.bin"}, ExpiresIn=60)
with urllib.request.urlopen(url) as response:
    check(response.read() == body, "SigV4 presigned URL")

# Wrong secret.
try:
    client(secret="wrong-secret").list_objects_v2(Bucket=bucket)
    check(False, "a wrong secret is rejected")
except ClientError as error:
    check(error.response["Error"]["Code"] == "SignatureDoesNotMatch", "a wrong secret is SignatureDoesNotMatch")

# Missing key.
try:
    s3.get_object(Bucket=bucket, Key="boto/none")
    check(False, "missing key is an error")
except ClientError as error:
    check(error.response["Error"]["Code"] == "NoSuchKey", "missing key is NoSuchKey")

print("boto3 interop: all checks passed")
