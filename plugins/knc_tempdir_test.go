package plugins_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/knc-dev/knc/plugins"
)

// TestTempDirIsWritable checks, for each form of the workload, that the
// container's root file system is read-only but /tmp is an emptyDir of
// its own, bounded in size: Graphviz keeps its compiled code there, so a
// restarted container does not compile it again.
func TestTempDirIsWritable(t *testing.T) {
	for _, form := range workloadForms {
		t.Run(form.name, func(t *testing.T) {
			objs := form.render(t)
			pod := podOf(t, objs)
			c := pod.Containers[0]
			i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == plugins.TempDir })
			if i < 0 {
				t.Fatalf("mounts %+v, want one at %s", c.VolumeMounts, plugins.TempDir)
			}
			if c.VolumeMounts[i].ReadOnly {
				t.Errorf("%s is mounted read-only", plugins.TempDir)
			}
			j := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
			if j < 0 {
				t.Fatalf("no volume %q", c.VolumeMounts[i].Name)
			}
			empty := pod.Volumes[j].EmptyDir
			if empty == nil || empty.SizeLimit == nil || empty.SizeLimit.IsZero() {
				t.Errorf("volume %+v, want an emptyDir with a size limit", pod.Volumes[j])
			}
		})
	}
}
