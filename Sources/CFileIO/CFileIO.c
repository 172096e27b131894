#define _GNU_SOURCE
#include "CFileIO.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int cfileio_start_writeback(int fd, int64_t offset, int64_t length) {
#if defined(__linux__)
    return sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    (void)offset;
    (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

int cfileio_sync_filesystem(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int cfileio_data_error(int fd) {
#if defined(__linux__)
    return sync_file_range(fd, 0, 0,
                           SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
#else
    return fdatasync(fd);
#endif
}

int64_t cfileio_copy_range(int from, int to, int64_t length) {
#if defined(__linux__)
    return (int64_t)copy_file_range(from, NULL, to, NULL, (size_t)length, 0);
#else
    (void)from;
    (void)to;
    (void)length;
    errno = ENOSYS;
    return -1;
#endif
}
