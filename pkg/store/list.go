package store

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// ListOptions selects what List returns. Predicate carries the label and field selectors, the
// attribute function, limit and continue token.
type ListOptions struct {
	// Namespace restricts the list to one namespace; empty means all.
	Namespace            string
	Predicate            storage.SelectionPredicate
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Shared returns the stored objects themselves instead of copies: the caller must not
	// modify them. For serving, where copying every object of a large list cost about as much
	// as encoding it (kube-apiserver's watch cache serves its objects the same way).
	Shared bool
}

// ListResult is one page of a list.
type ListResult struct {
	Items              []runtime.Object
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// List returns the objects that match opts, sorted by namespace and name, as of one resource
// version. Pages of a paginated list are all served from the resource version of the first
// page (rebuilt from the event log); once that falls out of the log the token is expired (410).
func (s *Store) List(ctx context.Context, opts ListOptions) (ListResult, error) {
	withRev, continueKey, err := storage.ValidateListOptions(keyPrefix, s.versioner, storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            opts.Predicate,
		Recursive:            true,
	})
	if err != nil {
		if apierrors.IsBadRequest(err) {
			return ListResult{}, err
		}
		return ListResult{}, apierrors.NewBadRequest(err.Error())
	}

	var exact uint64 // 0: the latest state
	switch {
	case withRev > 0:
		if exact, err = s.parseRV(fmt.Sprint(withRev)); err != nil {
			if continueKey != "" {
				return ListResult{}, expiredContinue()
			}
			return ListResult{}, err
		}
		if err := s.waitForRV(ctx, exact); err != nil {
			return ListResult{}, err
		}
	case opts.ResourceVersion != "" && opts.ResourceVersion != "0":
		// NotOlderThan (explicit or legacy): the latest state, once we have reached the version.
		notOlderThan, err := s.parseRV(opts.ResourceVersion)
		if err != nil {
			return ListResult{}, err
		}
		if err := s.waitForRV(ctx, notOlderThan); err != nil {
			return ListResult{}, err
		}
	}

	result, err := s.listLocked(exact, continueKey, opts)
	if err != nil {
		if continueKey != "" && apierrors.IsResourceExpired(err) {
			return ListResult{}, expiredContinue()
		}
		return ListResult{}, err
	}
	if !opts.Shared {
		for i, obj := range result.Items {
			result.Items[i] = obj.DeepCopyObject()
		}
	}
	return result, nil
}

// listLocked collects one page of the state at change counter exact (0: the current state),
// under the read lock.
func (s *Store) listLocked(exact uint64, continueKey string, opts ListOptions) (ListResult, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	at := s.counter
	if exact > 0 {
		at = exact
	}
	state, err := s.stateAtLocked(at)
	if err != nil {
		return ListResult{}, err
	}
	keys := s.sortedKeys
	if at != s.counter {
		keys = sortedKeysOf(state)
	}
	result := ListResult{ResourceVersion: s.formatRV(at)}
	limit := opts.Predicate.Limit
	unfiltered := opts.Predicate.Empty()
	var lastKey string
	for i, key := range keys {
		if continueKey != "" && key < continueKey {
			continue
		}
		obj := state[key]
		ok, err := s.matches(obj, key, opts.Namespace, opts.Predicate)
		if err != nil {
			return ListResult{}, err
		}
		if !ok {
			continue
		}
		if limit > 0 && int64(len(result.Items)) == limit {
			token, err := storage.EncodeContinue(lastKey+"\x00", keyPrefix, int64(s.encodeRV(at)))
			if err != nil {
				return ListResult{}, fmt.Errorf("encoding continue token: %w", err)
			}
			result.Continue = token
			if unfiltered && opts.Namespace == "" {
				remaining := int64(len(keys) - i)
				result.RemainingItemCount = &remaining
			}
			return result, nil
		}
		result.Items = append(result.Items, obj)
		lastKey = key
	}
	return result, nil
}

func (s *Store) matches(obj runtime.Object, key, namespace string, pred storage.SelectionPredicate) (bool, error) {
	if namespace != "" && namespaceOfKey(key) != namespace {
		return false, nil
	}
	if pred.Empty() {
		return true, nil
	}
	ok, err := pred.Matches(obj)
	if err != nil {
		return false, apierrors.NewInternalError(fmt.Errorf("matching selectors: %w", err))
	}
	return ok, nil
}

func expiredContinue() error {
	return apierrors.NewResourceExpired("the provided continue parameter is too old to display a consistent list result: start a new list without the continue parameter")
}
