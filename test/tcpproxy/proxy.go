// Package tcpproxy is a small round-robin TCP proxy on loopback for tests: it stands in for a
// Service's endpoints in front of several replicas, and can cut or refuse connections to
// simulate restarts and outages.
package tcpproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards each accepted connection to the next target that accepts it.
type Proxy struct {
	ln      net.Listener
	next    atomic.Uint64
	blocked atomic.Bool

	mu      sync.Mutex
	targets []string
	conns   map[net.Conn]struct{}
	done    chan struct{}
}

// Start listens on 127.0.0.1 on a free port.
func Start(targets ...string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	p := &Proxy{ln: ln, targets: targets, conns: map[net.Conn]struct{}{}, done: make(chan struct{})}
	go p.serve()
	return p, nil
}

// Port is the port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Block makes the proxy refuse (close at once) every new connection while on.
func (p *Proxy) Block(on bool) { p.blocked.Store(on) }

// CloseAll cuts every open connection, as a restart of the target would.
func (p *Proxy) CloseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// Close stops the proxy and cuts its connections.
func (p *Proxy) Close() {
	_ = p.ln.Close()
	<-p.done
	p.CloseAll()
}

func (p *Proxy) serve() {
	defer close(p.done)
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.blocked.Load() {
			_ = in.Close()
			continue
		}
		go p.forward(in)
	}
}

func (p *Proxy) forward(in net.Conn) {
	p.mu.Lock()
	targets := append([]string(nil), p.targets...)
	p.mu.Unlock()
	var out net.Conn
	start := p.next.Add(1)
	for i := range targets {
		c, err := net.Dial("tcp", targets[(int(start)+i)%len(targets)])
		if err == nil {
			out = c
			break
		}
	}
	if out == nil {
		_ = in.Close()
		return
	}
	p.track(in, true)
	p.track(out, true)
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	go pipe(out, in)
	go pipe(in, out)
	wg.Wait()
	p.track(in, false)
	p.track(out, false)
}

func (p *Proxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}
