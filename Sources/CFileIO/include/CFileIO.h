#ifndef CFILEIO_H
#define CFILEIO_H

#include <stdint.h>

/// Starts writeback of `length` bytes at `offset` of `fd` without waiting for it (Linux
/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that a later `fsync` finds most pages already on their
/// way to the disk. Returns 0, or -1 with errno set (ENOSYS where the call does not exist: harmless).
int cfileio_start_writeback(int fd, int64_t offset, int64_t length);

/// The first writeback error of `fd`'s data since `fd` was opened and not yet reported through it, after
/// writing and waiting for any of its pages still dirty (`sync_file_range` with `WAIT_BEFORE | WRITE |
/// WAIT_AFTER`; no metadata, no cache flush). After a `syncfs` of its file system this is what tells whether
/// the file's own data reached the disk: `syncfs` only reports errors seen since the descriptor it was given
/// was opened. Returns 0, or -1 with errno set.
int cfileio_data_error(int fd);

/// Writes every dirty page and metadata block of the file system holding `fd` and waits for it (Linux
/// `syncfs(2)`); errors of that writeback are reported. Returns 0, or -1 with errno set (ENOSYS where the
/// call does not exist: then sync file by file).
int cfileio_sync_filesystem(int fd);

/// Copies up to `length` bytes from `from` to `to` at their file offsets, inside the kernel (Linux
/// `copy_file_range(2)`: a clone on file systems that share blocks). Returns the bytes copied (0 at the end of
/// `from`), or -1 with errno set (EXDEV, EINVAL, ENOSYS, EOPNOTSUPP: copy through a buffer instead).
int64_t cfileio_copy_range(int from, int to, int64_t length);

/// Takes (or, with `exclusive` 0, releases) an exclusive lock on the one byte at `offset` of `fd` without
/// waiting: an open-file-description lock (Linux `F_OFD_SETLK`), so it is owned by this open of the file and
/// excludes every other open — in another process or this one — and is released when the file is closed.
/// Returns 0, or -1 with errno set (EAGAIN or EACCES: held by another open).
int cfileio_lock_byte(int fd, int64_t offset, int exclusive);

/// A non-blocking inotify descriptor that reports creations, renames and closes after writing of the files
/// directly in `folder`, and modifications of `file` alone (when it exists; see `cfileio_watch_file`): writes to
/// the folder's other files queue no event (Linux `inotify_init1` + `inotify_add_watch`). Returns the
/// descriptor, or -1 with errno set.
int cfileio_watch_folder(const char *folder, const char *file);

/// Adds to the inotify descriptor `fd` a watch of `file`'s modifications and closes after writing (not through
/// a symbolic link); its events carry no name. Returns 0, or -1 with errno set (ENOENT: no such file yet).
int cfileio_watch_file(int fd, const char *file);

/// glibc's `mallopt`: keep up to `keep` bytes free at the top of a heap before giving memory back to the kernel
/// (M_TRIM_THRESHOLD), grow a heap by `grow` bytes more than asked (M_TOP_PAD), and give allocations of at least
/// `mapped` bytes a mapping of their own (M_MMAP_THRESHOLD). Nothing elsewhere.
void cfileio_keep_freed_memory(int keep, int grow, int mapped);

/// Creates `path` for writing (`O_CREAT | O_EXCL`, never replacing anything) with `mode`, bypassing the page
/// cache where the file system allows it (Linux `O_DIRECT`: writes go from the caller's memory to the device; their
/// offsets, lengths and buffer addresses must be multiples of 4096). Sets `*direct` to 1 when the file was opened
/// so, 0 when the file system refused it and the file was opened for ordinary writes. Returns the descriptor, or
/// -1 with errno set.
int cfileio_create_direct(const char *path, int mode, int *direct);

/// Turns `O_DIRECT` off on `fd` (later writes go through the page cache). Returns 0, or -1 with errno set.
int cfileio_end_direct(int fd);

/// A pipe whose two descriptors are closed on `exec` (`pipe2(O_CLOEXEC)`: no child started meanwhile by another
/// thread inherits them). Returns 0, or -1 with errno set.
int cfileio_pipe_cloexec(int fds[2]);

/// Adds "close every descriptor from `lowest` up" to a `posix_spawn_file_actions_t` (glibc 2.34's
/// `posix_spawn_file_actions_addclosefrom_np`). Returns 0, or an error number (`ENOSYS` where it does not exist).
int cfileio_spawn_close_from(void *actions, int lowest);

#endif
