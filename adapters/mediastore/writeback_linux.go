package mediastore

import (
	"os"
	"syscall"
)

// writebackChunk is how much a staged file is written before its
// writeback starts: the disk then writes while the copy goes on, and the
// final fsync waits only for the tail, not for the whole upload.
const writebackChunk = 8 << 20

// syncFileRangeWrite is SYNC_FILE_RANGE_WRITE: start writeback of the
// range's dirty pages and do not wait for it.
const syncFileRangeWrite = 2

// writeback is a file that starts the writeback of each writebackChunk
// written, with sync_file_range(2).
type writeback struct {
	f        *os.File
	off      int64 // bytes written
	started  int64 // writeback started up to here
	disabled bool  // the filesystem refused: fsync alone it is
}

func newWriteback(f *os.File) *writeback { return &writeback{f: f} }

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if !w.disabled && w.off-w.started >= writebackChunk {
		if syscall.SyncFileRange(int(w.f.Fd()), w.started, w.off-w.started, syncFileRangeWrite) != nil {
			w.disabled = true
		}
		w.started = w.off
	}
	return n, err
}
