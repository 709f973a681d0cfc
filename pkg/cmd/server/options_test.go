package server

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(*Options) {}},
		{name: "events off needs no lease namespace", mutate: func(o *Options) { o.EmitEvents = false; o.LeaseNamespace = "" }},
		{name: "empty rukpak namespace", mutate: func(o *Options) { o.RukPakNamespace = "" }, wantErr: "--rukpak-namespace"},
		{name: "discovery too often", mutate: func(o *Options) { o.DiscoveryInterval = 10 * time.Millisecond }, wantErr: "--discovery-interval"},
		{name: "bookmarks rarer than a minute", mutate: func(o *Options) { o.BookmarkInterval = 2 * time.Minute }, wantErr: "--bookmark-interval"},
		{name: "tiny event log", mutate: func(o *Options) { o.EventLogSize = 5 }, wantErr: "--event-log-size"},
		{name: "tiny watcher buffer", mutate: func(o *Options) { o.WatcherBuffer = 1 }, wantErr: "--watcher-buffer"},
		{name: "no workers", mutate: func(o *Options) { o.Workers = 0 }, wantErr: "--workers"},
		{name: "no extension namespace", mutate: func(o *Options) { o.ExtensionNamespace = "" }, wantErr: "--extension-namespace"},
		{name: "no extension workers", mutate: func(o *Options) { o.ExtensionWorkers = 0 }, wantErr: "--extension-workers"},
		{name: "extension resync too often", mutate: func(o *Options) { o.ExtensionResync = time.Millisecond }, wantErr: "--extension-resync"},
		{name: "extension discovery too often", mutate: func(o *Options) { o.ExtensionDiscoveryInterval = 0 }, wantErr: "--extension-discovery-interval"},
		{name: "events without a lease namespace", mutate: func(o *Options) { o.LeaseNamespace = "" }, wantErr: "--leader-election-namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			tt.mutate(o)
			err := o.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

func TestNoEtcdNoAdmission(t *testing.T) {
	o := NewOptions()
	if o.Recommended.Etcd != nil || o.Recommended.Admission != nil {
		t.Error("Periscope stores nothing and admits nothing: etcd and admission options must be off")
	}
	if o.Recommended.Features.EnablePriorityAndFairness {
		t.Error("priority and fairness must be off (kube-apiserver applies it; it would need flowcontrol RBAC)")
	}
}
