#define _GNU_SOURCE
#include "CFileIO.h"

#include <errno.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <fcntl.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/inotify.h>
#endif

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

int cfileio_lock_byte(int fd, int64_t offset, int exclusive) {
#if defined(__linux__) && defined(F_OFD_SETLK)
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = exclusive ? F_WRLCK : F_UNLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = (off_t)offset;
    lock.l_len = 1;
    return fcntl(fd, F_OFD_SETLK, &lock);
#else
    (void)fd;
    (void)offset;
    (void)exclusive;
    errno = ENOSYS;
    return -1;
#endif
}

int cfileio_watch_folder(const char *folder, const char *file) {
#if defined(__linux__)
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return -1;
    if (inotify_add_watch(fd, folder, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    // Absent for now: its creation in the folder is reported, and the caller watches it then.
    (void)cfileio_watch_file(fd, file);
    return fd;
#else
    (void)folder;
    (void)file;
    errno = ENOSYS;
    return -1;
#endif
}

int cfileio_watch_file(int fd, const char *file) {
#if defined(__linux__)
    return inotify_add_watch(fd, file, IN_MODIFY | IN_CLOSE_WRITE | IN_DONT_FOLLOW) < 0 ? -1 : 0;
#else
    (void)fd;
    (void)file;
    errno = ENOSYS;
    return -1;
#endif
}

void cfileio_keep_freed_memory(int keep, int grow, int mapped) {
#if defined(__GLIBC__)
    (void)mallopt(M_TRIM_THRESHOLD, keep);
    (void)mallopt(M_TOP_PAD, grow);
    (void)mallopt(M_MMAP_THRESHOLD, mapped);
#else
    (void)keep;
    (void)grow;
    (void)mapped;
#endif
}

int cfileio_create_direct(const char *path, int mode, int *direct) {
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
#if defined(O_DIRECT)
    int fd = open(path, flags | O_DIRECT, (mode_t)mode);
    if (fd >= 0) {
        *direct = 1;
        return fd;
    }
    if (errno != EINVAL) return -1;
#endif
    *direct = 0;
    return open(path, flags, (mode_t)mode);
}

int cfileio_end_direct(int fd) {
#if defined(O_DIRECT)
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags & ~O_DIRECT);
#else
    (void)fd;
    return 0;
#endif
}

int cfileio_pipe_cloexec(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int cfileio_spawn_close_from(void *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}
