package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	corelisters "k8s.io/client-go/listers/core/v1"

	"periscope.dev/periscope/pkg/extension"
)

// Settings keys of the registration, with their defaults.
const (
	SettingConfigMapName     = "configMapName"
	SettingRetryAfterSeconds = "retryAfterSeconds"
	DefaultConfigMapName     = "readiness-approvals"
	DefaultRetryAfterSeconds = 30
	Approved                 = "approved"
	MaxRetryAfterSeconds     = 24 * 60 * 60
)

// checkApproval is the approved handler's logic: the cluster is ready when the ConfigMap named
// by the settings, in the cluster's namespace, maps the cluster's name to "approved". It reads
// only the lister (an informer's cache), so it never waits for the API server. Every answer
// carries RetryAfter, since an approval can change while the cluster does not.
//
// An error means the extension could not decide (bad settings, a broken cache); Periscope then
// reports the check as failed whatever the failure policy.
func checkApproval(configMaps corelisters.ConfigMapLister, cluster extension.ClusterInfo, settings map[string]string) (extension.Result, error) {
	name, retryAfter, err := parseSettings(settings)
	if err != nil {
		return extension.Result{}, err
	}
	if cluster.Namespace == "" || cluster.Name == "" {
		return extension.Result{}, fmt.Errorf("the request names no cluster (namespace %q, name %q)", cluster.Namespace, cluster.Name)
	}
	key := cluster.Namespace + "/" + name
	cm, err := configMaps.ConfigMaps(cluster.Namespace).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return extension.Result{Message: fmt.Sprintf("ConfigMap %s does not exist", key), RetryAfter: retryAfter}, nil
	case err != nil:
		return extension.Result{}, fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	value, ok := cm.Data[cluster.Name]
	switch {
	case !ok:
		return extension.Result{
			Message:    fmt.Sprintf("ConfigMap %s has no entry for cluster %s: set data[%q] to %q", key, cluster.Name, cluster.Name, Approved),
			RetryAfter: retryAfter,
		}, nil
	case value != Approved:
		return extension.Result{
			Message:    fmt.Sprintf("ConfigMap %s has data[%q] = %q, want %q", key, cluster.Name, value, Approved),
			RetryAfter: retryAfter,
		}, nil
	}
	return extension.Result{Ready: true, Message: fmt.Sprintf("approved by ConfigMap %s", key), RetryAfter: retryAfter}, nil
}

// parseSettings reads the ConfigMap name and the retry interval from the registration's
// settings; an absent or empty key takes its default, and retryAfterSeconds 0 leaves the
// next call to Periscope's resync.
func parseSettings(settings map[string]string) (string, time.Duration, error) {
	name := strings.TrimSpace(settings[SettingConfigMapName])
	if name == "" {
		name = DefaultConfigMapName
	} else if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", 0, fmt.Errorf("settings.%s %q is not a ConfigMap name: %s", SettingConfigMapName, name, strings.Join(errs, "; "))
	}
	retry := DefaultRetryAfterSeconds
	if s := strings.TrimSpace(settings[SettingRetryAfterSeconds]); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > MaxRetryAfterSeconds {
			return "", 0, fmt.Errorf("settings.%s %q is not a number of seconds between 0 and %d", SettingRetryAfterSeconds, s, MaxRetryAfterSeconds)
		}
		retry = n
	}
	return name, time.Duration(retry) * time.Second, nil
}
