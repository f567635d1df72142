package natsserver

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// JetStream recovers a damaged message block by cutting it at its first
// record that fails its checksum; the messages after it are gone, and are
// often reported as deleted rather than lost. A block that is shorter once
// JetStream has started than it was before is the trace such a cut leaves:
// the server never shortens a block as it starts otherwise, and a process
// that was killed leaves whole records behind.

// blockSizes returns the size of every message block under dir, by path.
func blockSizes(dir string) map[string]int64 {
	sizes := map[string]int64{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".blk") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			sizes[path] = info.Size()
		}
		return nil
	})
	return sizes
}

// damagedStreams returns the names of the streams with a block that is
// shorter in after than in before.
func damagedStreams(before, after map[string]int64) map[string]bool {
	out := map[string]bool{}
	for path, size := range after {
		if was, ok := before[path]; ok && size < was {
			// DIR/streams/STREAM/msgs/N.blk
			out[filepath.Base(filepath.Dir(filepath.Dir(path)))] = true
		}
	}
	return out
}

// DamagedStreams returns the names of the streams JetStream found a
// damaged block in, and cut, as it started.
func (s *Server) DamagedStreams() map[string]bool { return s.damaged }
