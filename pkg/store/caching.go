package store

import (
	"bytes"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CachingObject is a stored object as a watch event carries it to every watcher of one change:
// a runtime.CacheableObject, so that the API server's watch encoder encodes the event once per
// encoder (JSON, Table with given options, ...) instead of once per watcher. kube-apiserver's
// watch cache does the same with its cachingObject. The object itself is never handed out: it
// is stored, and encoders write the type meta of what they encode; GetObject and DeepCopyObject
// return copies.
type CachingObject struct {
	object runtime.Object

	mu      sync.Mutex
	encoded map[runtime.Identifier]*encoding
}

type encoding struct {
	once sync.Once
	raw  []byte
	err  error
}

var _ runtime.CacheableObject = &CachingObject{}

func newCachingObject(obj runtime.Object) *CachingObject {
	return &CachingObject{object: obj, encoded: map[runtime.Identifier]*encoding{}}
}

// CacheEncode writes the encoding by id, encoding a copy of the object the first time.
func (o *CachingObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	o.mu.Lock()
	e, ok := o.encoded[id]
	if !ok {
		e = &encoding{}
		o.encoded[id] = e
	}
	o.mu.Unlock()
	e.once.Do(func() {
		var buf bytes.Buffer
		e.err = encode(o.object.DeepCopyObject(), &buf)
		e.raw = buf.Bytes()
	})
	if e.err != nil {
		return e.err
	}
	if s, ok := w.(runtime.Splice); ok {
		s.Splice(e.raw)
		return nil
	}
	_, err := w.Write(e.raw)
	return err
}

// GetObject returns a copy of the object.
func (o *CachingObject) GetObject() runtime.Object { return o.object.DeepCopyObject() }

// GetObjectKind returns the kind of the object; it must not be modified.
func (o *CachingObject) GetObjectKind() schema.ObjectKind { return o.object.GetObjectKind() }

// DeepCopyObject returns a copy of the object (not of the wrapper).
func (o *CachingObject) DeepCopyObject() runtime.Object { return o.object.DeepCopyObject() }

// sharedEvent holds the watch objects of one change, made once and carried by every watcher.
type sharedEvent struct {
	curOnce, goneOnce sync.Once
	cur, gone         *CachingObject
}
