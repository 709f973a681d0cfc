package store

// ring is the bounded event log: the newest size events, oldest first.
type ring struct {
	buf   []event
	start int // index of the oldest event
	n     int
}

func newRing(size int) ring { return ring{buf: make([]event, size)} }

func (r *ring) push(ev event) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = ev
		r.n++
		return
	}
	r.buf[r.start] = ev
	r.start = (r.start + 1) % len(r.buf)
}

func (r *ring) at(i int) event { return r.buf[(r.start+i)%len(r.buf)] }

// oldestServable is the oldest change counter from which every later change is retained.
func (r *ring) oldestServable(current uint64) uint64 {
	if r.n == 0 {
		return current
	}
	return r.at(0).rv - 1
}

// covers reports whether every change after rv, up to current, is retained.
func (r *ring) covers(rv, current uint64) bool {
	return rv <= current && rv >= r.oldestServable(current)
}

// eachNewer calls f for every retained event after rv, oldest first.
func (r *ring) eachNewer(rv uint64, f func(event)) {
	for i := r.firstAfter(rv); i < r.n; i++ {
		f(r.at(i))
	}
}

// eachNewerReverse calls f for every retained event after rv, newest first.
func (r *ring) eachNewerReverse(rv uint64, f func(event)) {
	first := r.firstAfter(rv)
	for i := r.n - 1; i >= first; i-- {
		f(r.at(i))
	}
}

// firstAfter returns the index of the first event with a counter above rv. Counters grow by
// one per event, so it is arithmetic.
func (r *ring) firstAfter(rv uint64) int {
	if r.n == 0 {
		return 0
	}
	oldest := r.at(0).rv
	if rv < oldest {
		return 0
	}
	i := int(rv - oldest + 1)
	if i > r.n {
		return r.n
	}
	return i
}
