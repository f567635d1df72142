package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// tokenLifetime outlives any test; the API server's minimum is ten minutes.
const tokenLifetime = 2 * time.Hour

// ServiceAccountConfig returns a configuration that authenticates as
// system:serviceaccount:<namespace>:<name> with a bearer token from the
// TokenRequest API and nothing else: no client certificate, no
// impersonation. The ServiceAccount is created if it does not exist. What
// the configuration may do is exactly what RBAC grants that account.
func (e *Env) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	sas := e.clientset.CoreV1().ServiceAccounts(namespace)
	_, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubetest: creating ServiceAccount %s/%s: %w", namespace, name, err)
	}
	seconds := int64(tokenLifetime / time.Second)
	tr, err := sas.CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubetest: requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	// AnonymousClientConfig keeps the server address and CA and drops every
	// credential, so the token is the only identity sent.
	cfg := rest.AnonymousClientConfig(e.admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// ServiceAccount creates ServiceAccount name in namespace, grants it rules
// through a Role and RoleBinding of the same name when rules are given, and
// returns a configuration that acts as it (see ServiceAccountConfig). It
// fails t on error. RBAC changes take effect by the time the API server
// has answered the RoleBinding's creation.
func (e *Env) ServiceAccount(t testing.TB, namespace, name string, rules ...rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := e.ServiceAccountConfig(ctx, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		return cfg
	}
	rbac := e.clientset.RbacV1()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Rules: rules}
	if _, err := rbac.Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: creating Role %s/%s: %v", namespace, name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}
	if _, err := rbac.RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: creating RoleBinding %s/%s: %v", namespace, name, err)
	}
	return cfg
}
