// The "reins-wal-batch" SQLite VFS: the platform's default VFS (unix), except that
// the frames a commit appends to the write-ahead log reach the kernel in one write.
//
// SQLite writes each WAL frame as two writes, its 24-byte header and then its page, so
// a turn's commit (about a dozen pages) cost two dozen pwrite calls. This VFS keeps the
// frames of a transaction in memory while they are contiguous and writes them at once
// when the commit frame's page arrives, before that write returns: a commit is in the
// log (and a killed process loses nothing) exactly when it was before. Anything else
// done to the log first writes what is kept (see sqlite_wal_batch.cc).
#pragma once

namespace reins::store {

// Registers the VFS on first use (thread-safe) and returns its name, for
// sqlite3_open_v2. Falls back to "" (SQLite's default) when registration fails.
const char* WalBatchVfs();

}  // namespace reins::store
