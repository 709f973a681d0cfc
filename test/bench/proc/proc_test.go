package proc

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	// A command with spaces and parentheses, as a process may name itself.
	line := "4242 (periscope (x) y) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 98765 123456 789 18446744073709551615"
	got, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Stat{CPU: 3250 * time.Millisecond, StartTicks: 98765}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseStat("4242 periscope S 1"); err == nil {
		t.Error("want an error for a line without the command's parentheses")
	}
}

func TestSelf(t *testing.T) {
	pid := os.Getpid()
	if _, err := CPU(pid); err != nil {
		t.Fatal(err)
	}
	ago, err := StartedAgo(pid)
	if err != nil || ago < 0 || ago > time.Hour {
		t.Errorf("started %v ago (%v)", ago, err)
	}
	if rss, err := RSS(pid); err != nil || rss <= 0 {
		t.Errorf("RSS %d (%v)", rss, err)
	}
	if m, err := MemTotal(); err != nil || m <= 0 {
		t.Errorf("MemTotal %d (%v)", m, err)
	}
}
