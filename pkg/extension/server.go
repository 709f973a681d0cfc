package extension

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// MaxRequestBytes caps the body the server reads; Periscope's requests are a few kilobytes.
const MaxRequestBytes = 1 << 20

// Result is a check's answer about one cluster.
type Result struct {
	Ready   bool
	Message string
	// RetryAfter asks Periscope to check again after this long (rounded up to seconds); zero
	// leaves it to Periscope's resync.
	RetryAfter time.Duration
}

// CheckFunc answers a check. An error is answered as status Failure with the error as message:
// Periscope then reports the check as failed whatever the failure policy.
type CheckFunc func(ctx context.Context, req *ClusterReadinessCheckRequest) (Result, error)

// HandlerSpec is one handler a Server serves.
type HandlerSpec struct {
	// Name is a DNS label, unique within the server.
	Name string
	// TimeoutSeconds is how long Periscope waits for an answer: 0 means the default (10), at most 30.
	TimeoutSeconds int32
	// FailurePolicy is what Periscope does when the handler cannot be reached; empty means Fail.
	FailurePolicy FailurePolicy
	Check         CheckFunc
}

// Server serves discovery and routes ClusterReadinessCheck requests to handlers. It is an
// http.Handler; serve it over HTTPS.
type Server struct {
	handlers map[string]HandlerSpec
	order    []string
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// NewServer validates the handlers and returns a server for them.
func NewServer(handlers ...HandlerSpec) (*Server, error) {
	if len(handlers) == 0 {
		return nil, errors.New("an extension needs at least one handler")
	}
	s := &Server{handlers: map[string]HandlerSpec{}}
	for _, h := range handlers {
		if !dnsLabel.MatchString(h.Name) {
			return nil, fmt.Errorf("handler name %q is not a DNS label", h.Name)
		}
		if _, dup := s.handlers[h.Name]; dup {
			return nil, fmt.Errorf("handler %q is defined twice", h.Name)
		}
		if h.TimeoutSeconds < 0 || h.TimeoutSeconds > MaxTimeoutSeconds {
			return nil, fmt.Errorf("handler %q: timeoutSeconds must be between 1 and %d", h.Name, MaxTimeoutSeconds)
		}
		switch h.FailurePolicy {
		case "", FailurePolicyFail, FailurePolicyIgnore:
		default:
			return nil, fmt.Errorf("handler %q: failurePolicy must be Fail or Ignore, not %q", h.Name, h.FailurePolicy)
		}
		if h.Check == nil {
			return nil, fmt.Errorf("handler %q has no Check function", h.Name)
		}
		s.handlers[h.Name] = h
		s.order = append(s.order, h.Name)
	}
	return s, nil
}

// Discovery returns the discovery response the server answers.
func (s *Server) Discovery() DiscoveryResponse {
	resp := DiscoveryResponse{
		TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindDiscoveryResponse},
		Status:   ResponseStatusSuccess,
	}
	for _, name := range s.order {
		h := s.handlers[name]
		out := Handler{Name: name, RequestHook: RequestHook{APIVersion: APIVersion, Hook: HookClusterReadinessCheck}}
		if h.TimeoutSeconds > 0 {
			t := h.TimeoutSeconds
			out.TimeoutSeconds = &t
		}
		if h.FailurePolicy != "" {
			p := h.FailurePolicy
			out.FailurePolicy = &p
		}
		resp.Handlers = append(resp.Handlers, out)
	}
	return resp
}

// ServeHTTP serves POST <prefix>/discovery and POST <prefix>/clusterreadinesscheck/<handler>,
// where prefix is /hooks.visibility.periscope.dev/v1alpha1 after any base path of the
// registration: the routes match on the end of the path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is served", http.StatusMethodNotAllowed)
		return
	}
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, DiscoveryPath):
		var req DiscoveryRequest
		if !decode(w, r, &req) {
			return
		}
		writeJSON(w, s.Discovery())
	case strings.Contains(path, ClusterReadinessCheckPathPrefix):
		name := path[strings.LastIndex(path, ClusterReadinessCheckPathPrefix)+len(ClusterReadinessCheckPathPrefix):]
		h, ok := s.handlers[name]
		if !ok {
			http.Error(w, fmt.Sprintf("no handler %q", name), http.StatusNotFound)
			return
		}
		var req ClusterReadinessCheckRequest
		if !decode(w, r, &req) {
			return
		}
		resp := ClusterReadinessCheckResponse{TypeMeta: TypeMeta{APIVersion: APIVersion, Kind: KindClusterReadinessCheckResponse}}
		result, err := h.Check(r.Context(), &req)
		if err != nil {
			resp.Status, resp.Message = ResponseStatusFailure, err.Error()
		} else {
			resp.Status, resp.Ready, resp.Message = ResponseStatusSuccess, result.Ready, result.Message
			if result.RetryAfter > 0 {
				resp.RetryAfterSeconds = int32((result.RetryAfter + time.Second - 1) / time.Second)
			}
		}
		writeJSON(w, resp)
	default:
		http.Error(w, fmt.Sprintf("no hook at %s", path), http.StatusNotFound)
	}
}

func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	if len(body) > MaxRequestBytes {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return false
	}
	if err := json.Unmarshal(body, into); err != nil {
		http.Error(w, "decoding the request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// ListenAndServeTLS serves s on addr with the certificate and key files until ctx is done. The
// files are read again when they change (cert-manager renews a mounted Secret in place), so a
// renewed certificate is served without a restart.
func ListenAndServeTLS(ctx context.Context, addr, certFile, keyFile string, s http.Handler) error {
	certs := &reloadingCertificate{certFile: certFile, keyFile: keyFile}
	if _, err := certs.get(nil); err != nil {
		return err
	}
	srv := &http.Server{Addr: addr, Handler: s, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get}}
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServeTLS("", "") }()
	select {
	case err := <-errs:
		return fmt.Errorf("serving on %s: %w", addr, err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shutdown)
	}
}

// reloadingCertificate loads a key pair and loads it again when either file's modification time
// changes.
type reloadingCertificate struct {
	certFile, keyFile string

	mu      sync.Mutex
	modTime time.Time
	cert    *tls.Certificate
}

func (r *reloadingCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	latest := time.Time{}
	for _, f := range []string{r.certFile, r.keyFile} {
		info, err := os.Stat(f)
		if err != nil {
			if r.cert != nil {
				return r.cert, nil // mid-rotation: keep serving the last good pair
			}
			return nil, fmt.Errorf("reading the serving certificate: %w", err)
		}
		if info.ModTime().After(latest) {
			latest = info.ModTime()
		}
	}
	if r.cert != nil && !latest.After(r.modTime) {
		return r.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		if r.cert != nil {
			return r.cert, nil
		}
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	r.cert, r.modTime = &cert, latest
	return r.cert, nil
}
