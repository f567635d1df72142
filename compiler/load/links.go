package load

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/knc-dev/knc/internal/inputfs"
)

// ErrLinkBroken is returned for a symbolic link whose target does not
// exist.
var ErrLinkBroken = errors.New("symbolic link leads to nothing")

// maxLinkHops bounds how many links one path may go through, as the
// kernel's own limit does, so that a cycle of links ends.
const maxLinkHops = 255

// linkFix is what a user can do about a link the loader refuses. The
// exclude list of knc.yaml applies while walking; --exclude filters only
// what the walk found, so it cannot pass over a broken link.
const linkFix = "remove the link, or exclude it in knc.yaml"

// resolveWithin resolves the symbolic links of p, which the walk reached
// below root (a resolved directory), one component at a time. Each link's
// target is first checked lexically: a target outside root is refused
// before anything there is looked at, so that a contributed link does
// not even make knc stat a file of the machine. It returns the path p
// leads to, below root.
func resolveWithin(fsys inputfs.FS, p, root string) (string, error) {
	start := filepath.Join(resolved(fsys, filepath.Dir(p)), filepath.Base(p))
	if !within(root, start) {
		// p was named on the command line: the root itself, given
		// through a link (root was derived from it), or a path through a
		// directory link that leads out, which the walk never enters.
		target, err := fsys.EvalSymlinks(p)
		if err != nil {
			return "", err
		}
		if target = absPath(target); !within(root, target) {
			return "", outside(p, root, target)
		}
		return target, nil
	}
	rest := components(root, start)
	cur := root
	for hops := 0; len(rest) > 0; {
		next := filepath.Join(cur, rest[0])
		info, err := fsys.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", brokenLink(fsys, p, next)
			}
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur, rest = next, rest[1:]
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s: more than %d symbolic links in a row (a cycle?); %s", p, maxLinkHops, linkFix)
		}
		link, err := fsys.ReadLink(next)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(cur, link)
		}
		target := filepath.Join(append([]string{filepath.Clean(link)}, rest[1:]...)...)
		if !within(root, target) {
			return "", outside(p, root, target)
		}
		cur, rest = root, components(root, target)
	}
	return cur, nil
}

func outside(p, root, target string) error {
	return fmt.Errorf("%s: %w %s (it leads to %s); copy the file into the project, or exclude the link in knc.yaml", p, ErrLinkOutside, root, target)
}

// components splits p, which lies below root, into the names leading to
// it from root.
func components(root, p string) []string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." {
		return nil
	}
	return strings.Split(rel, string(filepath.Separator))
}

// brokenLink is the error for link p, whose resolution reached missing.
func brokenLink(fsys inputfs.FS, p, missing string) error {
	target, err := fsys.ReadLink(p)
	if err != nil {
		target = missing // a directory above p is the broken link
	}
	return fmt.Errorf("%s: %w: its target %s does not exist; %s", p, ErrLinkBroken, target, linkFix)
}
