package tcpproxy

import (
	"bufio"
	"fmt"
	"net"
	"testing"
)

// echoServer answers every line with its name.
func echoServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadString('\n'); err != nil {
						return
					}
					fmt.Fprintf(c, "%s\n", name)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func ask(t *testing.T, port int) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return "", err
	}
	defer c.Close()
	fmt.Fprintln(c, "who")
	return bufio.NewReader(c).ReadString('\n')
}

func TestRoundRobinSkipsDeadTargetsAndBlocks(t *testing.T) {
	a, b := echoServer(t, "a"), echoServer(t, "b")
	dead := "127.0.0.1:1" // nothing listens there
	p, err := Start(a, dead, b)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	seen := map[string]int{}
	for i := 0; i < 6; i++ {
		got, err := ask(t, p.Port())
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		seen[got]++
	}
	if seen["a\n"] == 0 || seen["b\n"] == 0 || seen["a\n"]+seen["b\n"] != 6 {
		t.Errorf("connections went to %v, want both live targets and nothing lost", seen)
	}
	p.Block(true)
	if got, err := ask(t, p.Port()); err == nil {
		t.Errorf("a blocked proxy answered %q", got)
	}
	p.Block(false)
	if _, err := ask(t, p.Port()); err != nil {
		t.Errorf("after unblocking: %v", err)
	}
}
