package extension

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"periscope.dev/periscope/internal/testcerts"
)

func writeSelfSigned(t *testing.T, certFile, keyFile, name string, mtime time.Time) {
	t.Helper()
	pair, err := testcerts.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pair.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pair.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServingCertificateIsReloadedWhenRenewed(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	start := time.Now().Add(-time.Hour)
	writeSelfSigned(t, certFile, keyFile, "first.example", start)
	r := &reloadingCertificate{certFile: certFile, keyFile: keyFile}
	name := func() string {
		t.Helper()
		c, err := r.get(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	if got := name(); got != "first.example" {
		t.Fatalf("serving %q, want first.example", got)
	}
	writeSelfSigned(t, certFile, keyFile, "renewed.example", start.Add(time.Minute))
	if got := name(); got != "renewed.example" {
		t.Errorf("after renewal serving %q, want renewed.example", got)
	}
	// A half-written rotation keeps the last good pair.
	if err := os.WriteFile(keyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(keyFile, start.Add(2*time.Minute), start.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "renewed.example" {
		t.Errorf("during a broken rotation serving %q, want the last good renewed.example", got)
	}
	if _, err := (&reloadingCertificate{certFile: filepath.Join(dir, "none"), keyFile: keyFile}).get(nil); err == nil {
		t.Error("a missing certificate file gave no error")
	}
}
