package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInventoryID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want objectKey
	}{
		{"shop_orders_eventing.knative.dev_Trigger", objectKey{"eventing.knative.dev", "Trigger", "shop", "orders"}},
		{"shop_leftover__ConfigMap", objectKey{"", "ConfigMap", "shop", "leftover"}},
		{"_knc-addressable-resolver_rbac.authorization.k8s.io_ClusterRole", objectKey{"rbac.authorization.k8s.io", "ClusterRole", "", "knc-addressable-resolver"}},
		{"_system__controller__knc_rbac.authorization.k8s.io_ClusterRole", objectKey{"rbac.authorization.k8s.io", "ClusterRole", "", "system:controller:knc"}},
		{"shop_a_b__c_apps_Deployment", objectKey{"apps", "Deployment", "shop", "a_b:c"}},
	} {
		got, err := parseInventoryID(tc.id)
		if err != nil {
			t.Errorf("%s: %v", tc.id, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(objectKey{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.id, diff)
		}
	}
	for _, bad := range []string{"", "shop", "shop_orders", "shop__Trigger"} {
		if got, err := parseInventoryID(bad); err == nil {
			t.Errorf("%q: got %+v, want an error", bad, got)
		}
	}
}
