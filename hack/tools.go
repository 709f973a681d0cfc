//go:build tools

// Package hack pins the code generators that hack/update-codegen.sh runs, so that their
// version is the one in go.mod.
package hack

import (
	_ "k8s.io/code-generator"
)
