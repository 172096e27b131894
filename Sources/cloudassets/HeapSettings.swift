import CFileIO

/// glibc gives the top of a thread's heap back to the kernel as soon as 128 KiB of it is free, and takes it back
/// (`mprotect`, then a page fault per page) at the next allocation: a `get` of 2,000 small originals did that
/// 4,600 times (2.3 per object). Keeping up to 64 MiB free at the top and growing by 16 MiB at a time cut it to
/// ~340 and the command's wall time by about a tenth. Setting these also fixes the size from which an allocation
/// gets a mapping of its own, which glibc would otherwise raise as large blocks are freed: it is set where glibc's
/// own adjustment ends (32 MiB, with 64 MiB its matching trim threshold).
///
/// The process's own setting, made only by the commands that move many small objects (`get`, `add`): kept memory
/// raised `image`'s peak on one large photo by about a MiB for nothing. The library sets nothing.
func keepFreedMemoryForReuse() {
    cfileio_keep_freed_memory(64 << 20, 16 << 20, 32 << 20)
}
