// Package store is a revisioned, in-memory object store with a bounded event log and fan-out to
// watchers. It holds computed objects (nothing is persisted) and gives them the list and watch
// semantics of kube-apiserver: resource versions on objects and lists, watches that resume from
// any retained resource version, initial events with the initial-events-end bookmark, periodic
// bookmarks, consistent paginated lists, and 410 Gone for resource versions it cannot serve.
//
// Resource versions are decimal uint64 strings. The high 32 bits hold the store's epoch, which
// is different for every process, and the low 32 bits count changes. A resource version from
// another replica or from an earlier process therefore never aliases one of ours: it is
// answered with 410 Gone and the client relists.
package store
