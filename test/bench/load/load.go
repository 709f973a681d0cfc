// Package load creates fixtures in kube-apiserver quickly: a bounded pool of workers, each
// creating an object and then writing its status through the status subresource.
package load

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"periscope.dev/periscope/test/bench/fixtures"
)

// Loader creates objects with Workers concurrent requests.
type Loader struct {
	Client  dynamic.Interface
	Workers int
}

// Stats counts what a load did.
type Stats struct {
	Created  int64 `json:"created"`
	Existing int64 `json:"existing"`
	Requests int64 `json:"requests"`
	// Seconds is the wall time of the load.
	Seconds float64 `json:"seconds"`
}

// Add accumulates another load's counts.
func (s *Stats) Add(o Stats) {
	s.Created += o.Created
	s.Existing += o.Existing
	s.Requests += o.Requests
	s.Seconds += o.Seconds
}

type counters struct{ created, existing, requests atomic.Int64 }

// Load creates every object of objs, with its status. An object that exists already (from an
// earlier, interrupted load) is kept, and gets its status if it has none. The first error stops
// the load.
func (l Loader) Load(ctx context.Context, objs iter.Seq[fixtures.Object]) (Stats, error) {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := max(l.Workers, 1)
	work := make(chan fixtures.Object, 2*workers)
	var c counters
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range work {
				if ctx.Err() != nil {
					continue // drain after a failure
				}
				if err := l.create(ctx, o, &c); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for o := range objs {
		select {
		case work <- o:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	stats := Stats{Created: c.created.Load(), Existing: c.existing.Load(), Requests: c.requests.Load(), Seconds: time.Since(start).Seconds()}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return stats, err
	}
	return stats, ctx.Err()
}

func (l Loader) create(ctx context.Context, o fixtures.Object, c *counters) error {
	var r dynamic.ResourceInterface = l.Client.Resource(o.Resource)
	if ns := o.Object.GetNamespace(); ns != "" {
		r = l.Client.Resource(o.Resource).Namespace(ns)
	}
	var obj *unstructured.Unstructured
	err := retry(ctx, c, func() (err error) {
		obj, err = r.Create(ctx, o.Object, metav1.CreateOptions{})
		return err
	})
	switch {
	case apierrors.IsAlreadyExists(err):
		c.existing.Add(1)
		if err := retry(ctx, c, func() (err error) {
			obj, err = r.Get(ctx, o.Object.GetName(), metav1.GetOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("get %s %s: %w", o.Resource.Resource, key(o), err)
		}
		if _, has := obj.Object["status"]; has {
			return nil
		}
	case err != nil:
		return fmt.Errorf("create %s %s: %w", o.Resource.Resource, key(o), err)
	default:
		c.created.Add(1)
	}
	if o.Status == nil {
		return nil
	}
	obj.Object["status"] = o.Status
	if err := retry(ctx, c, func() error {
		_, err := r.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("write the status of %s %s: %w", o.Resource.Resource, key(o), err)
	}
	return nil
}

func key(o fixtures.Object) string {
	if ns := o.Object.GetNamespace(); ns != "" {
		return ns + "/" + o.Object.GetName()
	}
	return o.Object.GetName()
}

// retry runs f until it succeeds, fails for good, or has failed 5 times for reasons that pass
// (a busy or restarting server). AlreadyExists after a retry means an earlier attempt
// succeeded; the caller handles it as an existing object.
func retry(ctx context.Context, c *counters, f func() error) error {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		c.requests.Add(1)
		err := f()
		if err == nil || attempt == 5 || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || errors.As(err, &netErr)
}
