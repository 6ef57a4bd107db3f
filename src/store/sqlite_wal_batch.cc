// How the WAL's frames are kept and when they are written (sqlite_wal_batch.h).
//
// Each file SQLite opens through this VFS is the default VFS's file plus a little
// state; only the write-ahead log ("-wal") keeps anything. SQLite appends a frame as
// its 24-byte header, then its page; bytes 4-7 of the header are the database's size
// on a commit frame and zero on any other (the documented WAL file format). So:
//   - a header, and the page that follows it, are kept while they continue what is kept;
//   - the page after a commit frame's header is written with everything kept, in the
//     same xWrite, whose result is the commit's;
//   - any other write (the log's own header at a restart, a rewritten checksum), any
//     write that does not continue what is kept, and every other call on the log
//     (read, sync, truncate, size, locks, file controls, close) first write what is
//     kept, so SQLite never sees the file differ from what it wrote.
// Other connections read only frames a commit made visible, after that commit's write.
#include "store/sqlite_wal_batch.h"

#include <sqlite3.h>

#include <cstring>
#include <string>

namespace reins::store {
namespace {

constexpr int kFrameHeaderBytes = 24;
// The unix VFS writes at most 0x1ffff bytes per call (it masks larger counts; a page is
// at most 64 KB): what is kept goes out before it would grow past that.
constexpr size_t kMaxWriteBytes = 0x1ffff;

sqlite3_vfs* g_default = nullptr;  // does the I/O
sqlite3_vfs g_batch;               // this VFS: g_default with another xOpen

struct BatchFile {
  sqlite3_file base;             // first: what SQLite holds
  sqlite3_io_methods methods;    // forwarders, for the methods the default file has
  sqlite3_file* real;            // the default VFS's file, in the same allocation
  std::string* kept;             // the log only: contiguous frames not written yet
  sqlite3_int64 kept_at;         // their offset in the log
  bool after_header;             // the last write kept was a frame header
  bool commit;                   // ... of a commit frame
};

constexpr int RealOffset() { return (sizeof(BatchFile) + 15) / 16 * 16; }

BatchFile* Of(sqlite3_file* file) { return reinterpret_cast<BatchFile*>(file); }
const sqlite3_io_methods& Real(BatchFile* f) { return *f->real->pMethods; }

int WriteKept(BatchFile* f) {
  if (f->kept == nullptr || f->kept->empty()) return SQLITE_OK;
  const int rc = Real(f).xWrite(f->real, f->kept->data(), static_cast<int>(f->kept->size()), f->kept_at);
  f->kept->clear();
  return rc;
}

int Flush(BatchFile* f) {
  f->after_header = false;
  return WriteKept(f);
}

int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  BatchFile* f = Of(file);
  if (f->kept == nullptr) return Real(f).xWrite(f->real, data, amount, offset);
  const bool header = amount == kFrameHeaderBytes;
  const bool continues = f->kept->empty() || offset == f->kept_at + static_cast<sqlite3_int64>(f->kept->size());
  if (!continues || (!header && !f->after_header)) {
    if (int rc = Flush(f); rc != SQLITE_OK) return rc;
    if (!header) return Real(f).xWrite(f->real, data, amount, offset);  // not a frame's page: as it comes
  }
  if (f->kept->size() + static_cast<size_t>(amount) > kMaxWriteBytes) {
    if (int rc = WriteKept(f); rc != SQLITE_OK) return rc;  // a page may still follow its header
  }
  if (f->kept->empty()) f->kept_at = offset;
  f->kept->append(static_cast<const char*>(data), static_cast<size_t>(amount));
  if (header) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    f->after_header = true;
    f->commit = (bytes[4] | bytes[5] | bytes[6] | bytes[7]) != 0;
    return SQLITE_OK;
  }
  f->after_header = false;
  return f->commit ? WriteKept(f) : SQLITE_OK;
}

int Close(sqlite3_file* file) {
  BatchFile* f = Of(file);
  const int flushed = Flush(f);
  const int closed = Real(f).xClose(f->real);
  delete f->kept;
  f->kept = nullptr;
  return flushed != SQLITE_OK ? flushed : closed;
}

// Every other method writes what is kept, then does what the default file does.
int Read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xRead(f->real, out, amount, offset);
}
int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xTruncate(f->real, size);
}
int Sync(sqlite3_file* file, int flags) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xSync(f->real, flags);
}
int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xFileSize(f->real, size);
}
int Lock(sqlite3_file* file, int level) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xLock(f->real, level);
}
int Unlock(sqlite3_file* file, int level) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xUnlock(f->real, level);
}
int CheckReservedLock(sqlite3_file* file, int* out) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xCheckReservedLock(f->real, out);
}
int FileControl(sqlite3_file* file, int op, void* arg) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xFileControl(f->real, op, arg);
}
int SectorSize(sqlite3_file* file) { return Real(Of(file)).xSectorSize(Of(file)->real); }
int DeviceCharacteristics(sqlite3_file* file) { return Real(Of(file)).xDeviceCharacteristics(Of(file)->real); }
int ShmMap(sqlite3_file* file, int page, int page_size, int extend, void volatile** out) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xShmMap(f->real, page, page_size, extend, out);
}
int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xShmLock(f->real, offset, n, flags);
}
void ShmBarrier(sqlite3_file* file) {
  BatchFile* f = Of(file);
  Flush(f);  // nothing is kept here: the shared memory belongs to the database file
  Real(f).xShmBarrier(f->real);
}
int ShmUnmap(sqlite3_file* file, int delete_flag) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xShmUnmap(f->real, delete_flag);
}
int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xFetch(f->real, offset, amount, out);
}
int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* p) {
  BatchFile* f = Of(file);
  if (int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f).xUnfetch(f->real, offset, p);
}

// The same methods as the default file has (a method it lacks stays absent: SQLite
// decides from that, e.g. whether WAL is possible at all).
sqlite3_io_methods MethodsLike(const sqlite3_io_methods& real) {
  sqlite3_io_methods m{};
  m.iVersion = real.iVersion;
  m.xClose = Close;
  m.xRead = Read;
  m.xWrite = Write;
  m.xTruncate = Truncate;
  m.xSync = Sync;
  m.xFileSize = FileSize;
  m.xLock = Lock;
  m.xUnlock = Unlock;
  m.xCheckReservedLock = CheckReservedLock;
  m.xFileControl = FileControl;
  m.xSectorSize = SectorSize;
  m.xDeviceCharacteristics = DeviceCharacteristics;
  if (real.iVersion >= 2) {
    m.xShmMap = real.xShmMap != nullptr ? ShmMap : nullptr;
    m.xShmLock = real.xShmLock != nullptr ? ShmLock : nullptr;
    m.xShmBarrier = real.xShmBarrier != nullptr ? ShmBarrier : nullptr;
    m.xShmUnmap = real.xShmUnmap != nullptr ? ShmUnmap : nullptr;
  }
  if (real.iVersion >= 3) {
    m.xFetch = real.xFetch != nullptr ? Fetch : nullptr;
    m.xUnfetch = real.xUnfetch != nullptr ? Unfetch : nullptr;
  }
  return m;
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  BatchFile* f = Of(file);
  file->pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + RealOffset());
  f->real->pMethods = nullptr;
  f->kept = nullptr;
  f->kept_at = 0;
  f->after_header = false;
  f->commit = false;
  const int rc = g_default->xOpen(g_default, name, f->real, flags, out_flags);
  // SQLite closes a file whose pMethods is set even when opening it failed: mirror it.
  if (f->real->pMethods == nullptr) return rc;
  if ((flags & SQLITE_OPEN_WAL) != 0) f->kept = new std::string;
  f->methods = MethodsLike(*f->real->pMethods);
  file->pMethods = &f->methods;
  return rc;
}

}  // namespace

const char* WalBatchVfs() {
  static const char* const name = []() -> const char* {
    g_default = sqlite3_vfs_find(nullptr);
    if (g_default == nullptr) return "";
    g_batch = *g_default;  // its other methods use only what is copied (path length, app data)
    g_batch.zName = "reins-wal-batch";
    g_batch.szOsFile = RealOffset() + g_default->szOsFile;
    g_batch.xOpen = Open;
    g_batch.pNext = nullptr;
    if (sqlite3_vfs_register(&g_batch, /*makeDflt=*/0) != SQLITE_OK) return "";
    return g_batch.zName;
  }();
  return name;
}

}  // namespace reins::store
