// Package conditions holds the condition rules every computed Periscope object shares.
package conditions

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WithTransition sets c's lastTransitionTime: kept from the previous condition of its type when
// the status did not change, else observed, the newest write time among the sources. Both are
// the same on every replica, unlike a replica's clock.
func WithTransition(c metav1.Condition, previous []metav1.Condition, observed time.Time) metav1.Condition {
	if prev := meta.FindStatusCondition(previous, c.Type); prev != nil && prev.Status == c.Status {
		c.LastTransitionTime = prev.LastTransitionTime
		return c
	}
	c.LastTransitionTime = metav1.NewTime(observed.UTC().Truncate(time.Second))
	return c
}

// Latest returns the latest of times, or floor when none is later.
func Latest(floor time.Time, times ...time.Time) time.Time {
	latest := floor
	for _, t := range times {
		if t.After(latest) {
			latest = t
		}
	}
	return latest
}
