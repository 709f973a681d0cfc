// Package client calls readiness extensions: discovery and ClusterReadinessCheck, over HTTPS
// verified against the registration's CA bundle, without following redirects, with capped
// response sizes and each call bounded by its timeout. Every failure is a *CallError whose
// Reason says what went wrong, so that a check can report it.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"periscope.dev/periscope/pkg/extension"
)

// Response size caps: a discovery answer lists a few handlers, a check answer is one message.
const (
	MaxDiscoveryResponseBytes = 1 << 20
	MaxCheckResponseBytes     = 64 << 10
	// maxMessageBytes bounds a message copied into a ClusterReadiness.
	maxMessageBytes = 1024
)

// Reasons of a CallError.
const (
	ReasonTimeout         = "Timeout"
	ReasonUnreachable     = "Unreachable"
	ReasonTLSError        = "TLSError"
	ReasonHTTPError       = "HTTPError"
	ReasonInvalidResponse = "InvalidResponse"
)

// CallError is a call that got no usable answer.
type CallError struct {
	Reason string
	Err    error
}

func (e *CallError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// Target is where an extension is.
type Target struct {
	// BaseURL is the URL the hook paths are appended to, without a trailing slash.
	BaseURL string
	// ServerName is the TLS name to verify; empty means the URL's host.
	ServerName string
	// CABundle is PEM; empty means the system's roots.
	CABundle []byte
}

// Client calls one extension.
type Client struct {
	target Target
	http   *http.Client
}

// New returns a client for target.
func New(target Target) (*Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: target.ServerName}
	if len(target.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(target.CABundle) {
			return nil, errors.New("the CA bundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	if _, err := url.Parse(target.BaseURL); err != nil {
		return nil, fmt.Errorf("parsing %q: %w", target.BaseURL, err)
	}
	transport := &http.Transport{
		TLSClientConfig:     tlsConfig,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return &Client{target: target, http: &http.Client{
		Transport: transport,
		// An extension that redirects is misconfigured; following it could send the request
		// somewhere the registration did not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Handler is a discovered handler with its defaults applied.
type Handler struct {
	Name          string
	Timeout       time.Duration
	FailurePolicy extension.FailurePolicy
}

// Discover asks the extension for its handlers. Handlers of hooks Periscope does not know are
// left out; an invalid handler fails the discovery, with the reason.
func (c *Client) Discover(ctx context.Context, timeout time.Duration) ([]Handler, error) {
	var resp extension.DiscoveryResponse
	req := extension.DiscoveryRequest{TypeMeta: extension.TypeMeta{APIVersion: extension.APIVersion, Kind: extension.KindDiscoveryRequest}}
	if err := c.post(ctx, timeout, extension.DiscoveryPath, req, &resp, MaxDiscoveryResponseBytes); err != nil {
		return nil, err
	}
	invalid := func(format string, args ...any) error {
		return &CallError{Reason: ReasonInvalidResponse, Err: fmt.Errorf(format, args...)}
	}
	if resp.APIVersion != extension.APIVersion {
		return nil, invalid("apiVersion is %q, want %q", resp.APIVersion, extension.APIVersion)
	}
	if resp.Status != extension.ResponseStatusSuccess {
		return nil, invalid("discovery answered status %q: %s", resp.Status, truncate(resp.Message))
	}
	var out []Handler
	seen := map[string]bool{}
	for _, h := range resp.Handlers {
		if h.RequestHook.APIVersion != extension.APIVersion || h.RequestHook.Hook != extension.HookClusterReadinessCheck {
			continue // a hook of a later protocol version or another kind
		}
		if !dnsLabel.MatchString(h.Name) {
			return nil, invalid("handler name %q is not a DNS label", truncate(h.Name))
		}
		if seen[h.Name] {
			return nil, invalid("handler %q is listed twice", h.Name)
		}
		seen[h.Name] = true
		out1 := Handler{Name: h.Name, Timeout: time.Duration(extension.DefaultTimeoutSeconds) * time.Second, FailurePolicy: extension.FailurePolicyFail}
		if h.TimeoutSeconds != nil {
			if *h.TimeoutSeconds < 1 || *h.TimeoutSeconds > extension.MaxTimeoutSeconds {
				return nil, invalid("handler %q: timeoutSeconds %d is not between 1 and %d", h.Name, *h.TimeoutSeconds, extension.MaxTimeoutSeconds)
			}
			out1.Timeout = time.Duration(*h.TimeoutSeconds) * time.Second
		}
		if h.FailurePolicy != nil {
			switch *h.FailurePolicy {
			case extension.FailurePolicyFail, extension.FailurePolicyIgnore:
				out1.FailurePolicy = *h.FailurePolicy
			default:
				return nil, invalid("handler %q: failurePolicy %q is not Fail or Ignore", h.Name, *h.FailurePolicy)
			}
		}
		out = append(out, out1)
	}
	return out, nil
}

// MaxRetryAfter bounds an extension's retryAfterSeconds.
const MaxRetryAfter = 24 * time.Hour

// Answer is a check's validated answer.
type Answer struct {
	// Failure is true when the extension answered status Failure.
	Failure    bool
	Ready      bool
	Message    string
	RetryAfter time.Duration
}

// Check calls handler about one cluster.
func (c *Client) Check(ctx context.Context, h Handler, req *extension.ClusterReadinessCheckRequest) (Answer, error) {
	req.TypeMeta = extension.TypeMeta{APIVersion: extension.APIVersion, Kind: extension.KindClusterReadinessCheckRequest}
	var resp extension.ClusterReadinessCheckResponse
	if err := c.post(ctx, h.Timeout, extension.ClusterReadinessCheckPathPrefix+h.Name, req, &resp, MaxCheckResponseBytes); err != nil {
		return Answer{}, err
	}
	invalid := func(format string, args ...any) error {
		return &CallError{Reason: ReasonInvalidResponse, Err: fmt.Errorf(format, args...)}
	}
	if resp.APIVersion != extension.APIVersion {
		return Answer{}, invalid("apiVersion is %q, want %q", truncate(resp.APIVersion), extension.APIVersion)
	}
	if resp.RetryAfterSeconds < 0 {
		return Answer{}, invalid("retryAfterSeconds %d is negative", resp.RetryAfterSeconds)
	}
	a := Answer{Ready: resp.Ready, Message: truncate(resp.Message), RetryAfter: time.Duration(resp.RetryAfterSeconds) * time.Second}
	if a.RetryAfter > MaxRetryAfter {
		a.RetryAfter = MaxRetryAfter
	}
	switch resp.Status {
	case extension.ResponseStatusSuccess:
	case extension.ResponseStatusFailure:
		a.Failure, a.Ready = true, false
	default:
		return Answer{}, invalid("status %q is not Success or Failure", truncate(string(resp.Status)))
	}
	return a, nil
}

func (c *Client) post(ctx context.Context, timeout time.Duration, path string, in, out any, maxBytes int64) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding the request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.target.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return &CallError{Reason: ReasonUnreachable, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return classify(ctx, err, timeout)
	}
	defer func() { _ = resp.Body.Close() }()
	// The timeout covers reading the body too: a server that trickles is cut off.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil || ctx.Err() != nil {
		// A body cut short by the deadline is a timeout, not a garbled answer.
		return classify(ctx, err, timeout)
	}
	if resp.StatusCode != http.StatusOK {
		return &CallError{Reason: ReasonHTTPError, Err: fmt.Errorf("%s answered %d %s: %s", path, resp.StatusCode, http.StatusText(resp.StatusCode), truncate(string(data)))}
	}
	if int64(len(data)) > maxBytes {
		return &CallError{Reason: ReasonInvalidResponse, Err: fmt.Errorf("the response is larger than %d bytes", maxBytes)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &CallError{Reason: ReasonInvalidResponse, Err: fmt.Errorf("decoding the response: %w", err)}
	}
	return nil
}

func classify(ctx context.Context, err error, timeout time.Duration) error {
	if err == nil {
		err = ctx.Err()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &CallError{Reason: ReasonTimeout, Err: fmt.Errorf("no answer within %s", timeout)}
	}
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	if errors.As(err, &certErr) || errors.As(err, &unknownAuthority) || errors.As(err, &hostnameErr) || errors.As(err, &recordErr) {
		return &CallError{Reason: ReasonTLSError, Err: stripURL(err)}
	}
	return &CallError{Reason: ReasonUnreachable, Err: stripURL(err)}
}

// stripURL drops the "Post <url>:" prefix of url.Error, which repeats what the registration says.
func stripURL(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}

func truncate(s string) string {
	if len(s) <= maxMessageBytes {
		return s
	}
	return s[:maxMessageBytes] + "..."
}
