package check

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// nameRule is a Kubernetes rule for object names; each returns what is
// wrong with a name, or nothing.
type nameRule func(name string) []string

// kindNameRules holds the kinds whose names follow another rule than the
// DNS-1123 subdomain of most kinds, custom resources included. They are
// those of the API server's validation of each kind (pkg/apis/core and
// pkg/apis/rbac in kubernetes/kubernetes).
var kindNameRules = map[[2]string]nameRule{
	{"", "Namespace"}: validation.IsDNS1123Label,
	{"", "Service"}:   validation.IsDNS1035Label,
	// Role names are path segments: "system:aggregate-to-view" is one.
	{"rbac.authorization.k8s.io", "Role"}:               pathSegment,
	{"rbac.authorization.k8s.io", "ClusterRole"}:        pathSegment,
	{"rbac.authorization.k8s.io", "RoleBinding"}:        pathSegment,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}: pathSegment,
}

// pathSegment is the API server's rule for names used as one segment of a
// request path: neither "." nor "..", and no "/" or "%".
func pathSegment(name string) []string {
	var problems []string
	if name == "." || name == ".." {
		problems = append(problems, "may not be '.' or '..'")
	}
	for _, c := range []string{"/", "%"} {
		if strings.Contains(name, c) {
			problems = append(problems, "may not contain '"+c+"'")
		}
	}
	return problems
}

// checkOtherNames checks the name and namespace of an object of a kind knc
// does not model against the rules the API server applies, so that no name
// reaches build (whose directories are named after namespaces) that a
// cluster would refuse.
func checkOtherNames(doc *load.Document) diag.List {
	var diags diag.List
	rule, ok := kindNameRules[[2]string{model.Group(doc.APIVersion), doc.Kind}]
	if !ok {
		rule = validation.IsDNS1123Subdomain
	}
	if problems := rule(doc.Name); len(problems) > 0 {
		diags.Add(doc.PosOf("metadata.name"), "metadata.name", "%q is not a valid %s name: %s", doc.Name, doc.Kind, strings.Join(problems, "; "))
	}
	if doc.Namespace != "" {
		if problems := validation.IsDNS1123Label(doc.Namespace); len(problems) > 0 {
			diags.Add(doc.PosOf("metadata.namespace"), "metadata.namespace", "%q is not a valid namespace: %s", doc.Namespace, strings.Join(problems, "; "))
		}
	}
	return diags
}
