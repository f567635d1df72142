// Package gitrev reads a project's files as they were at another git
// revision, so that knc can compile the same paths at a base commit and
// compare the two. It runs the git command rather than reading the object
// store itself, so worktrees, shallow clones, partial clones and
// alternates behave as they do for git.
//
// It lives under compiler/internal because only the compiler (knc diff's
// base revision) reads git history. It must not import the rest of the
// compiler or the runtime: it knows about files and commits, not manifests.
// Tests build their repositories with internal/gittest.
package gitrev
