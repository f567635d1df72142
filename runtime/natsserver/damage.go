package natsserver

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// JetStream recovers a damaged message block by cutting it at its first
// record that fails its checksum; the messages after it are gone, and are
// often reported as deleted rather than lost. It cuts the block's file in
// place, so a block that is the same file and shorter once JetStream has
// started than it was before is the trace such a cut leaves: a process
// that was killed leaves whole records behind. JetStream also shortens
// blocks as it starts by rewriting them without removed messages (as when
// a work-queue stream drops what its consumers had acknowledged before the
// stop); it writes such a block as a new file and renames it over the
// old one, and nothing is lost by it.

// blocks returns every message block under dir, by path, as it was seen:
// its size, and what tells the same file from one written anew under its
// name (os.SameFile).
func blocks(dir string) map[string]fs.FileInfo {
	found := map[string]fs.FileInfo{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".blk") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			found[path] = info
		}
		return nil
	})
	return found
}

// damagedStreams returns the names of the streams with a block that is
// the same file in before and after, and shorter in after.
func damagedStreams(before, after map[string]fs.FileInfo) map[string]bool {
	out := map[string]bool{}
	for path, now := range after {
		if was, ok := before[path]; ok && now.Size() < was.Size() && os.SameFile(was, now) {
			// DIR/streams/STREAM/msgs/N.blk
			out[filepath.Base(filepath.Dir(filepath.Dir(path)))] = true
		}
	}
	return out
}

// DamagedStreams returns the names of the streams JetStream found a
// damaged block in, and cut, as it started.
func (s *Server) DamagedStreams() map[string]bool { return s.damaged }
