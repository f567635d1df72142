// Package version says which knc this is: the version, commit and image
// digest stamped at build time with -ldflags (see the Makefile and
// .goreleaser.yaml), else what the Go toolchain recorded in the binary.
package version

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Set at build time with -ldflags "-X github.com/knc-dev/knc/internal/version.version=v0.3.0 ...".
var (
	version string
	commit  string
	// imageDigest is the digest (sha256:...) of the runtime image a
	// release publishes, known to the release's own binaries because the
	// image is built first.
	imageDigest string
)

// Devel is the version of a build that knows none.
const Devel = "(devel)"

// Info describes this build of knc.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"goVersion"`
	// ImageDigest is the digest of the runtime image of this release,
	// when known.
	ImageDigest string `json:"imageDigest,omitempty"`
}

// Get returns the stamped values, filled in from the build information
// the Go toolchain records (go install module@version, or a build in a git
// work tree) where nothing was stamped.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, imageDigest, bi)
}

func resolve(version, commit, digest string, bi *debug.BuildInfo) Info {
	info := Info{Version: version, Commit: commit, GoVersion: runtime.Version(), ImageDigest: digest}
	if bi != nil {
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			var modified bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					info.Commit = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if modified && info.Commit != "" {
				info.Commit += "-dirty"
			}
		}
	}
	if info.Version == "" {
		info.Version = Devel
	}
	return info
}

// Released reports whether the version is that of a release, which has a
// published image: a semantic version tag, not a development build, a
// pseudo-version of an untagged commit or a build from a modified tree.
func (i Info) Released() bool {
	v := i.Version
	return semver.IsValid(v) && !module.IsPseudoVersion(v) && !gitDescribed.MatchString(v) &&
		!strings.Contains(v, "+dirty") && !strings.HasSuffix(v, "-dirty") && !strings.HasSuffix(i.Commit, "-dirty")
}

// gitDescribed matches what git describe makes of a commit after a tag:
// v1.2.3-4-gabcdef0.
var gitDescribed = regexp.MustCompile(`-[0-9]+-g[0-9a-f]{7,}(-dirty)?$`)

// Label is the version as a Kubernetes label value (at most 63 letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit),
// or "" for a development build.
func (i Info) Label() string {
	if i.Version == Devel {
		return ""
	}
	b := []byte(i.Version)
	for j, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[j] = '_'
		}
	}
	if len(b) > 63 {
		b = b[:63]
	}
	return strings.Trim(string(b), "-_.")
}
