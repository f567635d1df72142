# Included by the top-level Makefile. Builds the kube-apiserver and etcd that
# internal/kubetest runs; hack/testbin/build.sh skips the build while the pins
# in hack/testbin/go.mod are unchanged, so depending on this target is cheap.

KUBEBUILDER_ASSETS ?= $(CURDIR)/hack/testbin/bin

.PHONY: testbin
testbin:
	bash $(CURDIR)/hack/testbin/build.sh
