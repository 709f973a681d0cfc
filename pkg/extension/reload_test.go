package extension

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeSelfSigned(t *testing.T, certFile, keyFile, name string, mtime time.Time) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{name}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
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
