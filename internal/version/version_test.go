package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}
	dirty := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1-0.20261123101010-abcdefabcdef+dirty"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abcdefabcdef"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}
	tests := []struct {
		name                    string
		version, commit, digest string
		bi                      *debug.BuildInfo
		want                    Info
		released                bool
		label                   string
	}{
		{"stamped", "v0.3.0", "0123abc", "sha256:feed", vcs, Info{Version: "v0.3.0", Commit: "0123abc", ImageDigest: "sha256:feed"}, true, "v0.3.0"},
		{"go build in a work tree", "", "", "", vcs, Info{Version: Devel, Commit: "abc123"}, false, ""},
		{"modified work tree", "", "", "", dirty, Info{Version: "v0.3.1-0.20261123101010-abcdefabcdef+dirty", Commit: "abcdefabcdef-dirty"}, false, "v0.3.1-0.20261123101010-abcdefabcdef_dirty"},
		{"go install at a tag", "", "", "", installed, Info{Version: "v0.3.0"}, true, "v0.3.0"},
		{"no build info", "", "", "", nil, Info{Version: Devel}, false, ""},
		{"pre-release", "v0.4.0-rc.1", "c", "", nil, Info{Version: "v0.4.0-rc.1", Commit: "c"}, true, "v0.4.0-rc.1"},
		{"git describe after a tag", "v0.3.0-4-gabcdef0", "c", "", nil, Info{Version: "v0.3.0-4-gabcdef0", Commit: "c"}, false, "v0.3.0-4-gabcdef0"},
		{"git describe of a modified tree", "v0.3.0-dirty", "c", "", nil, Info{Version: "v0.3.0-dirty", Commit: "c"}, false, "v0.3.0-dirty"},
		{"not a tag", "devel-15c8d84", "c", "", nil, Info{Version: "devel-15c8d84", Commit: "c"}, false, "devel-15c8d84"},
		{"stamped from a dirty tree", "v0.3.0", "0123abc-dirty", "", nil, Info{Version: "v0.3.0", Commit: "0123abc-dirty"}, false, "v0.3.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.version, tt.commit, tt.digest, tt.bi)
			tt.want.GoVersion = runtime.Version()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if r := got.Released(); r != tt.released {
				t.Errorf("Released() = %v, want %v", r, tt.released)
			}
			if l := got.Label(); l != tt.label {
				t.Errorf("Label() = %q, want %q", l, tt.label)
			}
		})
	}
}
