package kubetest

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAnnotation records on a namespace which test it belongs to, for
// reading a control plane's state while debugging.
const TestAnnotation = "kubetest.knc.dev/test"

// Namespace creates a namespace with a unique name for t and deletes it
// when t ends. Tests that use their own namespaces can run in parallel
// against one control plane.
//
// No namespace controller runs, so a deleted namespace stays Terminating
// with its contents; names never repeat, so that does not leak between
// tests.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := e.clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: namespacePrefix(t.Name()),
			Annotations:  map[string]string{TestAnnotation: t.Name()},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := e.clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: deleting namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespacePrefix turns a test name into a GenerateName prefix: a DNS
// label of lower-case letters, digits and dashes, short enough to leave
// room for the five random characters the API server appends.
func namespacePrefix(testName string) string {
	const maxPrefix = 40
	var b strings.Builder
	b.WriteString("t-")
	dash := true
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= maxPrefix {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := b.String()
	if !dash {
		s += "-"
	}
	return s
}
