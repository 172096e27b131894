"""Drives a running fake S3 server with the aws CLI; exits non-zero on the first failed check.

The CLI commands run in this one Python process through awscli's own driver (exactly what the
`aws` executable runs), which saves the CLI's multi-second start-up per command.

Usage: python3 aws_cli_interop.py ENDPOINT BUCKET WORKDIR
Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; run by InteropTests.swift.
"""
import contextlib
import io
import json
import os
import subprocess
import sys

from awscli.clidriver import create_clidriver

endpoint, bucket, workdir = sys.argv[1:4]


def aws(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = create_clidriver().main(["--endpoint-url", endpoint, *args])
    if status != 0:
        print(f"FAILED: aws {' '.join(args)} exited with {status}", file=sys.stderr)
        sys.exit(1)
    return out.getvalue()


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def patterned(size):
    data = bytearray(b"\x42" * size)
    for i in range(0, size, 997):
        data[i] = (i // 997) & 0xFF
    return bytes(data)


small = os.path.join(workdir, "small.bin")
small_data = patterned(100_000)
with open(small, "wb") as f:
    f.write(small_data)

check(bucket in aws("s3", "ls"), "aws s3 ls lists the bucket")

aws("s3", "cp", "--only-show-errors", small, f"s3://{bucket}/cli/small file+é.bin")
back = os.path.join(workdir, "back.bin")
aws("s3", "cp", "--only-show-errors", f"s3://{bucket}/cli/small file+é.bin", back)
check(open(back, "rb").read() == small_data, "aws s3 cp up and down round-trips")
check("small file+é.bin" in aws("s3", "ls", f"s3://{bucket}/cli/"), "aws s3 ls shows the uploaded key")

head = json.loads(aws("s3api", "head-object", "--bucket", bucket, "--key", "cli/small file+é.bin"))
check(head["ContentLength"] == len(small_data), "aws s3api head-object reports the length")

ranged = os.path.join(workdir, "range.bin")
got = json.loads(aws("s3api", "get-object", "--bucket", bucket, "--key", "cli/small file+é.bin",
                     "--range", "bytes=10-19", ranged))
check(open(ranged, "rb").read() == small_data[10:20], "aws s3api get-object --range returns the bytes")
check(got["ContentRange"] == f"bytes 10-19/{len(small_data)}", "get-object --range reports Content-Range")

big = os.path.join(workdir, "big.bin")
big_data = patterned(9 * 1024 * 1024)
with open(big, "wb") as f:
    f.write(big_data)
aws("s3", "cp", "--only-show-errors", big, f"s3://{bucket}/cli/big.bin")
etag = json.loads(aws("s3api", "head-object", "--bucket", bucket, "--key", "cli/big.bin"))["ETag"]
check(etag.endswith('-2"'), "a 9 MiB aws s3 cp is a two-part multipart upload")
big_back = os.path.join(workdir, "big-back.bin")
aws("s3", "cp", "--only-show-errors", f"s3://{bucket}/cli/big.bin", big_back)
check(open(big_back, "rb").read() == big_data, "the multipart upload downloads intact")

url = aws("s3", "presign", f"s3://{bucket}/cli/small file+é.bin").strip()
fetched = os.path.join(workdir, "curl.bin")
subprocess.run(["curl", "-sS", "-f", "-o", fetched, url], check=True)
check(open(fetched, "rb").read() == small_data, "aws s3 presign, then curl fetches the object")

aws("s3", "rm", "--only-show-errors", "--recursive", f"s3://{bucket}/cli/")
check("cli/" not in aws("s3", "ls", f"s3://{bucket}/"), "aws s3 rm --recursive empties the prefix")

print("aws CLI interop: all checks passed")
