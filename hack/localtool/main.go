// Command localtool helps hack/local-up.sh: it generates the local control plane's
// certificates and keys (in Go, no openssl), finds free loopback ports, and renders the
// APIService of artifacts/ for a local Periscope.
//
//	localtool certs DIR             write every certificate and key into DIR (kept if present)
//	localtool free-ports N          print N free TCP ports on 127.0.0.1
//	localtool apiservice FILE CA PORT   print FILE's APIService with caBundle and service port set
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "localtool: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: localtool certs DIR | free-ports N | apiservice FILE CA PORT")
	}
	switch args[0] {
	case "certs":
		if len(args) != 2 {
			return errors.New("usage: localtool certs DIR")
		}
		return writeCerts(args[1])
	case "free-ports":
		if len(args) != 2 {
			return errors.New("usage: localtool free-ports N")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return fmt.Errorf("N must be a positive number, got %q", args[1])
		}
		return freePorts(n)
	case "apiservice":
		if len(args) != 4 {
			return errors.New("usage: localtool apiservice FILE CA PORT")
		}
		return renderAPIService(args[1], args[2], args[3])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

type keyPair struct {
	cert *x509.Certificate
	key  *rsa.PrivateKey
}

// writeCerts writes, unless they exist: the cluster CA, the kube-apiserver serving
// certificate, an admin client certificate (system:masters), the front-proxy CA and client
// certificate for the aggregator, the service-account signing key, and Periscope's serving CA
// and certificate for periscope.periscope-system.svc, and, signed by the same serving CA, the
// demo readiness extension's certificate for approval-extension.periscope-system.svc.
func writeCerts(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "approval-extension.crt")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := newCA("periscope-local-ca")
	if err != nil {
		return err
	}
	frontProxyCA, err := newCA("periscope-local-front-proxy-ca")
	if err != nil {
		return err
	}
	periscopeCA, err := newCA("periscope-serving-ca")
	if err != nil {
		return err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	apiserver, err := newLeaf(ca, pkix.Name{CommonName: "kube-apiserver"},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		append(loopback, net.ParseIP("10.0.0.1")), x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	admin, err := newLeaf(ca, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, nil, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	frontProxyClient, err := newLeaf(frontProxyCA, pkix.Name{CommonName: "front-proxy-client"}, nil, nil, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	periscope, err := newLeaf(periscopeCA, pkix.Name{CommonName: "periscope.periscope-system.svc"},
		[]string{"periscope.periscope-system.svc", "periscope.periscope-system.svc.cluster.local", "localhost"},
		loopback, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	extension, err := newLeaf(periscopeCA, pkix.Name{CommonName: "approval-extension.periscope-system.svc"},
		[]string{"approval-extension.periscope-system.svc", "localhost"}, loopback, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	for name, kp := range map[string]keyPair{
		"ca": ca, "apiserver": apiserver, "admin": admin,
		"front-proxy-ca": frontProxyCA, "front-proxy-client": frontProxyClient,
		"periscope-ca": periscopeCA, "periscope": periscope, "approval-extension": extension,
	} {
		if err := writePair(dir, name, kp); err != nil {
			return err
		}
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
}

func newCA(name string) (keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return keyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return keyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	return keyPair{cert: cert, key: key}, err
}

func newLeaf(ca keyPair, subject pkix.Name, dns []string, ips []net.IP, usage x509.ExtKeyUsage) (keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return keyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return keyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(5 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return keyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	return keyPair{cert: cert, key: key}, err
}

func writePair(dir, name string, kp keyPair) error {
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", kp.cert.Raw); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(kp.key))
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// freePorts asks the kernel for free ports, holding them all open until every one is chosen so
// that no two are the same.
func freePorts(n int) error {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		listeners = append(listeners, l)
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
	}
	return nil
}

// renderAPIService sets the caBundle and the service port of the APIService in file.
func renderAPIService(file, caFile, port string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("port: %w", err)
	}
	var obj map[string]interface{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	spec, ok := obj["spec"].(map[string]interface{})
	if !ok {
		return fmt.Errorf("%s: no spec", file)
	}
	svc, ok := spec["service"].(map[string]interface{})
	if !ok {
		return fmt.Errorf("%s: no spec.service", file)
	}
	svc["port"] = p
	spec["caBundle"] = base64.StdEncoding.EncodeToString(ca)
	if md, ok := obj["metadata"].(map[string]interface{}); ok {
		delete(md, "annotations") // the cert-manager injection annotation has no use locally
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
