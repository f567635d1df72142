package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Serve serves the repository read-only over git's smart HTTP protocol on
// loopback, through `git http-backend` run as a CGI program, as a git
// server would, until the test ends. It returns the clone URL, ending in
// /NAME.git. Clients see the branches and tags the work tree has
// committed; later commits are served as soon as they are made.
func (r *Repo) Serve(name string) string {
	r.t.Helper()
	exe, err := exec.LookPath("git")
	if err != nil {
		r.t.Fatalf("git is needed for this test: %v", err)
	}
	// http-backend maps the URL path below GIT_PROJECT_ROOT to a
	// repository; a symlink gives the work tree's .git the name clients use.
	root := r.t.TempDir()
	if err := os.Symlink(filepath.Join(r.Dir, ".git"), filepath.Join(root, name+".git")); err != nil {
		r.t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: exe,
		Args: []string{"http-backend"},
		Dir:  root,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			// Serve without a git-daemon-export-ok file in the repository.
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.DevNull,
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Nothing is pushed over HTTP: the test commits in the work tree.
		if strings.HasSuffix(req.URL.Path, "/git-receive-pack") || req.URL.Query().Get("service") == "git-receive-pack" {
			http.Error(w, "read-only", http.StatusForbidden)
			return
		}
		backend.ServeHTTP(w, req)
	}))
	r.t.Cleanup(srv.Close)
	return srv.URL + "/" + name + ".git"
}
