package readonly

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"periscope.dev/periscope/pkg/store"
)

// EncodingCache keeps the JSON encoding of each stored object version, so that a list is
// written by joining bytes encoded once per object version instead of encoding every object on
// every list. kube-apiserver's watch cache caches watch events' encodings the same way; for
// lists this is what brings Periscope near the cost of listing ConfigMaps of the same size
// (docs/benchmarks.md). Objects are immutable once stored (a change stores a new object), so
// an entry is valid while its object is the one listed.
type EncodingCache struct {
	store   *store.Store
	mu      sync.Mutex
	entries map[string]encodedObject // by namespace/name
	// pruneAt is the number of entries at which those of deleted objects are dropped.
	pruneAt int
}

type encodedObject struct {
	namespace, name string
	obj             runtime.Object // the stored object the bytes encode
	id              runtime.Identifier
	raw             []byte // without the encoder's trailing newline
}

// minPrune is the fewest entries at which a cache looks for entries of deleted objects.
const minPrune = 1024

// NewEncodingCache returns an empty cache of the objects of s.
func NewEncodingCache(s *store.Store) *EncodingCache {
	return &EncodingCache{store: s, entries: map[string]encodedObject{}, pruneAt: minPrune}
}

// CachedList makes a list a runtime.CacheableObject. A resource embeds it, with its typed list,
// in a small wrapper (see NewCachedList's callers): the typed list keeps every list accessor
// and reflection working (Table and PartialObjectMetadataList output), while the API server's
// JSON encoder is handed CacheEncode.
type CachedList struct {
	list  runtime.Object
	items []runtime.Object // the stored objects, in list order
	cache *EncodingCache
}

// NewCachedList returns the encoding side of a list of the stored objects items.
func NewCachedList(list runtime.Object, items []runtime.Object, cache *EncodingCache) CachedList {
	return CachedList{list: list, items: items, cache: cache}
}

// GetObject returns the plain list.
func (l CachedList) GetObject() runtime.Object { return l.list }

// CacheEncode writes the list as the API server's streaming JSON list encoder would, each item
// from the cache. Any encoder but plain JSON (YAML, pretty JSON, protobuf, Table) encodes the
// plain list as usual.
func (l CachedList) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	if l.cache == nil || !isPlainJSON(id) {
		return encode(l.list, w)
	}
	var buf bytes.Buffer
	buf.WriteString("{")
	gvk := l.list.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		return encode(l.list, w) // without its kind the list cannot be written by hand
	}
	writeField(&buf, "kind", gvk.Kind)
	writeField(&buf, "apiVersion", gvk.GroupVersion().String())
	listMeta, err := meta.ListAccessor(l.list)
	if err != nil {
		return encode(l.list, w)
	}
	raw, err := json.Marshal(metav1.ListMeta{
		ResourceVersion: listMeta.GetResourceVersion(), Continue: listMeta.GetContinue(),
		RemainingItemCount: listMeta.GetRemainingItemCount(),
	})
	if err != nil {
		return fmt.Errorf("encoding the list metadata: %w", err)
	}
	buf.WriteString(`"metadata":`)
	buf.Write(raw)
	buf.WriteString(`,"items":[`)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	for i, item := range l.items {
		raw, err := l.cache.encoded(item, id, encode)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := w.Write([]byte(",")); err != nil {
				return err
			}
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
	_, err = w.Write([]byte("]}\n"))
	return err
}

func writeField(buf *bytes.Buffer, key, value string) {
	raw, _ := json.Marshal(value) // a string: cannot fail
	fmt.Fprintf(buf, "%q:%s,", key, raw)
}

// encoded returns item's encoding by id, encoding a copy on a miss (the encoder sets the
// object's kind while it works, which must not race with other readers of the stored object).
func (c *EncodingCache) encoded(item runtime.Object, id runtime.Identifier, encode func(runtime.Object, io.Writer) error) ([]byte, error) {
	accessor, err := meta.Accessor(item)
	if err != nil {
		return nil, fmt.Errorf("encoding a list item: %w", err)
	}
	key := accessor.GetNamespace() + "/" + accessor.GetName()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.obj == item && e.id == id {
		return e.raw, nil
	}
	var buf bytes.Buffer
	if err := encode(item.DeepCopyObject(), &buf); err != nil {
		return nil, err
	}
	raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = encodedObject{namespace: accessor.GetNamespace(), name: accessor.GetName(), obj: item, id: id, raw: raw}
	if len(c.entries) >= c.pruneAt {
		c.pruneLocked()
	}
	return raw, nil
}

// pruneLocked drops the entries whose object is no longer stored (deleted objects; replaced
// ones are overwritten when next listed), and waits for twice as many entries before the next
// pass, so that pruning costs O(1) per entry added.
func (c *EncodingCache) pruneLocked() {
	for key, e := range c.entries {
		if !c.store.Stored(e.namespace, e.name, e.obj) {
			delete(c.entries, key)
		}
	}
	c.pruneAt = max(minPrune, 2*len(c.entries))
}

// isPlainJSON reports whether id is the API server's JSON encoder without YAML or indentation:
// {"encodeGV":...,"encoder":"{\"name\":\"json\",\"pretty\":\"false\",...,\"yaml\":\"false\"}","name":"versioning"}.
func isPlainJSON(id runtime.Identifier) bool {
	var outer map[string]string
	if err := json.Unmarshal([]byte(id), &outer); err != nil || outer["name"] != "versioning" {
		return false
	}
	var inner map[string]string
	if err := json.Unmarshal([]byte(outer["encoder"]), &inner); err != nil {
		return false
	}
	return inner["name"] == "json" && inner["yaml"] == "false" && inner["pretty"] == "false"
}
