package main

import (
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// TestDeployManifests decodes every file of deploy/ strictly into its type, so that a typo in a
// field name fails here rather than at kubectl apply, and checks that the pieces fit together.
func TestDeployManifests(t *testing.T) {
	files, err := filepath.Glob("deploy/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	kinds := map[string]func() runtime.Object{
		"ServiceAccount":     func() runtime.Object { return &corev1.ServiceAccount{} },
		"ClusterRole":        func() runtime.Object { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding": func() runtime.Object { return &rbacv1.ClusterRoleBinding{} },
		"Deployment":         func() runtime.Object { return &appsv1.Deployment{} },
		"Service":            func() runtime.Object { return &corev1.Service{} },
		"ConfigMap":          func() runtime.Object { return &corev1.ConfigMap{} },
		"Certificate":        func() runtime.Object { return &metav1.PartialObjectMetadata{} },
	}
	objs := map[string]runtime.Object{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(data, &tm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		newObj, ok := kinds[tm.Kind]
		if !ok {
			t.Fatalf("%s: unexpected kind %q", f, tm.Kind)
		}
		obj := newObj()
		if tm.Kind == "Certificate" {
			err = yaml.Unmarshal(data, obj) // no Go type here: metadata only
		} else {
			err = yaml.UnmarshalStrict(data, obj)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, dup := objs[tm.Kind]; dup {
			t.Fatalf("%s: a second %s; one object per kind expected", f, tm.Kind)
		}
		objs[tm.Kind] = obj
	}
	for kind := range kinds {
		if objs[kind] == nil {
			t.Errorf("no %s in deploy/", kind)
		}
	}
	if t.Failed() {
		return
	}

	sa := objs["ServiceAccount"].(*corev1.ServiceAccount)
	dep := objs["Deployment"].(*appsv1.Deployment)
	svc := objs["Service"].(*corev1.Service)
	cm := objs["ConfigMap"].(*corev1.ConfigMap)
	crb := objs["ClusterRoleBinding"].(*rbacv1.ClusterRoleBinding)
	for _, m := range []metav1.Object{sa, dep, svc, cm, objs["Certificate"].(*metav1.PartialObjectMetadata)} {
		if m.GetNamespace() != "periscope-system" {
			t.Errorf("%s is in namespace %q, want periscope-system", m.GetName(), m.GetNamespace())
		}
	}
	if dep.Spec.Template.Spec.ServiceAccountName != sa.Name {
		t.Errorf("Deployment runs as %q, the ServiceAccount is %q", dep.Spec.Template.Spec.ServiceAccountName, sa.Name)
	}
	if s := crb.Subjects; len(s) != 1 || s[0].Name != sa.Name || s[0].Namespace != sa.Namespace || crb.RoleRef.Name != objs["ClusterRole"].(*rbacv1.ClusterRole).Name {
		t.Errorf("ClusterRoleBinding does not bind the ClusterRole to the ServiceAccount: %+v", crb)
	}
	if svc.Name != "approval-extension" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 {
		t.Errorf("Service: want approval-extension port 443, got %s %+v", svc.Name, svc.Spec.Ports)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].Name != svc.Spec.Ports[0].TargetPort.StrVal || c.Ports[0].ContainerPort != 9443 {
		t.Errorf("Service targets %v, the container serves %+v", svc.Spec.Ports[0].TargetPort, c.Ports)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil {
		t.Errorf("readiness probe must be a TCP socket probe (the extension serves POST only)")
	}

	if cm.Labels["visibility.periscope.dev/readiness-extension"] != "true" {
		t.Errorf("registration ConfigMap lacks the readiness-extension label: %v", cm.Labels)
	}
	var clientConfig struct {
		URL     *string `json:"url,omitempty"`
		Service *struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
			Port      int32  `json:"port"`
			Path      string `json:"path,omitempty"`
		} `json:"service,omitempty"`
		CABundle string `json:"caBundle"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["clientConfig"]), &clientConfig); err != nil {
		t.Errorf("clientConfig: %v", err)
	} else if clientConfig.URL != nil || clientConfig.Service == nil || clientConfig.Service.Name != svc.Name ||
		clientConfig.Service.Namespace != svc.Namespace || clientConfig.Service.Port != svc.Spec.Ports[0].Port {
		t.Errorf("clientConfig does not point at the Service: %+v", clientConfig)
	}
	for _, key := range []string{"namespaceSelector", "clusterSelector"} {
		var sel metav1.LabelSelector
		if err := yaml.UnmarshalStrict([]byte(cm.Data[key]), &sel); err != nil {
			t.Errorf("%s: %v", key, err)
		} else if _, err := metav1.LabelSelectorAsSelector(&sel); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	var settings map[string]string
	if err := yaml.UnmarshalStrict([]byte(cm.Data["settings"]), &settings); err != nil {
		t.Errorf("settings: %v", err)
	} else if _, _, err := parseSettings(settings); err != nil {
		t.Errorf("settings: %v", err)
	}
}
