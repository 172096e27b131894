#ifndef CFILEIO_H
#define CFILEIO_H

#include <stdint.h>

/// Starts writeback of `length` bytes at `offset` of `fd` without waiting for it (Linux
/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that a later `fsync` finds most pages already on their
/// way to the disk. Returns 0, or -1 with errno set (ENOSYS where the call does not exist: harmless).
int cfileio_start_writeback(int fd, int64_t offset, int64_t length);

/// Writes every dirty page and metadata block of the file system holding `fd` and waits for it (Linux
/// `syncfs(2)`); errors of that writeback are reported. Returns 0, or -1 with errno set (ENOSYS where the
/// call does not exist: then sync file by file).
int cfileio_sync_filesystem(int fd);

#endif
