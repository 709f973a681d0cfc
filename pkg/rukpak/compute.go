package rukpak

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"periscope.dev/periscope/pkg/apis/visibility/v1alpha1"
	"periscope.dev/periscope/pkg/conditions"
)

// Condition types and reasons of a RukPakConfig.
const (
	ConditionAvailable    = "Available"
	ConditionSourcesValid = "SourcesValid"

	ReasonAvailable              = "Available"
	ReasonNotInstalled           = "RukPakNotInstalled"
	ReasonNoProvisioners         = "NoProvisioners"
	ReasonProvisionerUnavailable = "ProvisionerUnavailable"
	ReasonClassMissing           = "ClassMissing"
	ReasonProvisionerDisabled    = "ProvisionerDisabled"
	ReasonProvisionerDegraded    = "ProvisionerDegraded"
	ReasonValid                  = "Valid"
	ReasonInvalidSource          = "InvalidSource"
)

// Compute returns the RukPakConfig status for in. The result depends on in alone: the same
// sources give the same status on every replica.
func Compute(in Input) v1alpha1.RukPakConfigStatus {
	provisioners := provisionersOf(in)
	classes := classesOf(provisioners, in.Bundles, in.BundleDeployments)
	status := v1alpha1.RukPakConfigStatus{
		Installed:    in.Installed,
		Provisioners: provisioners,
		Classes:      classes,
	}
	observed := latestWrite(in)
	status.Conditions = []metav1.Condition{
		conditions.WithTransition(availableCondition(in.Installed, provisioners, classes), in.Previous, observed),
		conditions.WithTransition(sourcesValidCondition(in.Invalid), in.Previous, observed),
	}
	return status
}

func provisionersOf(in Input) []v1alpha1.Provisioner {
	seen := map[string]bool{}
	var out []v1alpha1.Provisioner
	for _, w := range in.Workloads {
		id := string(w.Kind) + "/" + w.Namespace + "/" + w.Name
		if seen[id] {
			continue
		}
		classes, message, ok := servedClasses(w, in.Namespace)
		if !ok {
			continue
		}
		seen[id] = true
		p := v1alpha1.Provisioner{
			Namespace:       w.Namespace,
			Name:            w.Name,
			Kind:            w.Kind,
			ClassNames:      classes,
			DesiredReplicas: w.Desired,
			ReadyReplicas:   w.Ready,
		}
		p.State, p.Message = workloadState(w.Desired, w.Ready)
		if message != "" {
			p.Message = joinNonEmpty("; ", p.Message, message)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// servedClasses tells whether w is a provisioner and which classes it serves. The opt-in
// annotation wins over the upstream defaults, so an admin can correct them. message reports a
// problem with the annotation.
func servedClasses(w Workload, rukpakNamespace string) (classes []string, message string, ok bool) {
	optedIn := w.Labels[ProvisionerLabel] == "true"
	upstream, isUpstream := upstreamProvisioners[w.Name]
	isUpstream = isUpstream && w.Kind == v1alpha1.WorkloadDeployment && w.Namespace == rukpakNamespace
	if !optedIn && !isUpstream {
		return nil, "", false
	}
	raw, annotated := w.Annotations[ProvisionerClassesAnnotation]
	if !optedIn || !annotated {
		if isUpstream {
			return append([]string(nil), upstream...), "", true
		}
		return nil, fmt.Sprintf("annotation %s is missing: the classes this workload serves are unknown", ProvisionerClassesAnnotation), true
	}
	set := map[string]bool{}
	var invalid []string
	for _, c := range strings.Split(raw, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("%q", c))
			continue
		}
		set[c] = true
	}
	for c := range set {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	switch {
	case len(invalid) > 0:
		message = fmt.Sprintf("annotation %s names invalid class names %s", ProvisionerClassesAnnotation, strings.Join(invalid, ", "))
	case len(classes) == 0:
		message = fmt.Sprintf("annotation %s names no class", ProvisionerClassesAnnotation)
	}
	return classes, message, true
}

func workloadState(desired, ready int32) (v1alpha1.ProvisionerState, string) {
	switch {
	case desired == 0:
		return v1alpha1.ProvisionerDisabled, "scaled to 0"
	case ready >= desired:
		return v1alpha1.ProvisionerRunning, ""
	case ready > 0:
		return v1alpha1.ProvisionerDegraded, fmt.Sprintf("%d of %d replicas ready", ready, desired)
	default:
		return v1alpha1.ProvisionerUnavailable, fmt.Sprintf("0 of %d replicas ready", desired)
	}
}

var stateRank = map[v1alpha1.ProvisionerState]int{
	v1alpha1.ProvisionerRunning:     0,
	v1alpha1.ProvisionerDegraded:    1,
	v1alpha1.ProvisionerUnavailable: 2,
	v1alpha1.ProvisionerDisabled:    3,
}

var classStateOf = map[v1alpha1.ProvisionerState]v1alpha1.ClassState{
	v1alpha1.ProvisionerRunning:     v1alpha1.ClassAvailable,
	v1alpha1.ProvisionerDegraded:    v1alpha1.ClassAvailable,
	v1alpha1.ProvisionerUnavailable: v1alpha1.ClassUnavailable,
	v1alpha1.ProvisionerDisabled:    v1alpha1.ClassDisabled,
}

func classesOf(provisioners []v1alpha1.Provisioner, bundles, deployments []BundleRef) []v1alpha1.ProvisionerClass {
	byName := map[string]*v1alpha1.ProvisionerClass{}
	best := map[string]*v1alpha1.Provisioner{}
	class := func(name string) *v1alpha1.ProvisionerClass {
		c, ok := byName[name]
		if !ok {
			c = &v1alpha1.ProvisionerClass{Name: name, BundleFormat: bundleFormats[name], State: v1alpha1.ClassMissing}
			byName[name] = c
		}
		return c
	}
	// provisioners is sorted by namespace and name, so on equal state the first one wins.
	for i := range provisioners {
		p := &provisioners[i]
		for _, name := range p.ClassNames {
			c := class(name)
			if b, ok := best[name]; !ok || stateRank[p.State] < stateRank[b.State] {
				best[name] = p
				c.Provisioner = p.Namespace + "/" + p.Name
				c.State = classStateOf[p.State]
			}
		}
	}
	for _, b := range bundles {
		count(&class(b.Class).Bundles, b.Progress)
	}
	for _, b := range deployments {
		count(&class(b.Class).BundleDeployments, b.Progress)
	}
	out := make([]v1alpha1.ProvisionerClass, 0, len(byName))
	for _, c := range byName {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func count(c *v1alpha1.BundleCounts, p Progress) {
	c.Total++
	switch p {
	case Ready:
		c.Ready++
	case Failing:
		c.Failing++
	default:
		c.Pending++
	}
}

// availableCondition is True when rukpak is installed, every provisioner is Running and no class
// is Missing. Otherwise its reason is the most severe problem and its message names them all.
func availableCondition(installed bool, provisioners []v1alpha1.Provisioner, classes []v1alpha1.ProvisionerClass) metav1.Condition {
	cond := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionFalse}
	if !installed {
		cond.Reason = ReasonNotInstalled
		cond.Message = "rukpak is not installed: the API server serves neither bundles nor bundledeployments in core.rukpak.io"
		return cond
	}
	if len(provisioners) == 0 {
		cond.Reason = ReasonNoProvisioners
		cond.Message = fmt.Sprintf("rukpak is installed but no provisioner workload runs: none of the upstream Deployments exists and no workload is labelled %s=true", ProvisionerLabel)
		return cond
	}

	// Problems in order of severity; the first one found gives the reason.
	problems := map[string][]string{}
	for _, p := range provisioners {
		ref := p.Namespace + "/" + p.Name
		var waitingBundles, waitingDeployments int32
		var served []string
		for _, c := range classes {
			if c.Provisioner == ref {
				served = append(served, c.Name)
				waitingBundles += c.Bundles.Pending
				waitingDeployments += c.BundleDeployments.Pending
			}
		}
		switch p.State {
		case v1alpha1.ProvisionerDisabled:
			problems[ReasonProvisionerDisabled] = append(problems[ReasonProvisionerDisabled],
				servedBy(served, ref, "scaled to 0")+waitClause(waitingBundles, waitingDeployments))
		case v1alpha1.ProvisionerUnavailable:
			problems[ReasonProvisionerUnavailable] = append(problems[ReasonProvisionerUnavailable],
				servedBy(served, ref, fmt.Sprintf("which has 0 of %d replicas ready", p.DesiredReplicas))+waitClause(waitingBundles, waitingDeployments))
		case v1alpha1.ProvisionerDegraded:
			problems[ReasonProvisionerDegraded] = append(problems[ReasonProvisionerDegraded],
				fmt.Sprintf("%s has %d of %d replicas ready", ref, p.ReadyReplicas, p.DesiredReplicas))
		}
	}
	for _, c := range classes {
		if c.State == v1alpha1.ClassMissing {
			problems[ReasonClassMissing] = append(problems[ReasonClassMissing],
				fmt.Sprintf("no provisioner serves %s, which %s", c.Name, nameClause(c.Bundles.Total, c.BundleDeployments.Total)))
		}
	}
	var messages []string
	for _, reason := range []string{ReasonProvisionerUnavailable, ReasonClassMissing, ReasonProvisionerDisabled, ReasonProvisionerDegraded} {
		if len(problems[reason]) == 0 {
			continue
		}
		if cond.Reason == "" {
			cond.Reason = reason
		}
		messages = append(messages, problems[reason]...)
	}
	if cond.Reason != "" {
		cond.Message = strings.Join(messages, "; ")
		return cond
	}
	cond.Status = metav1.ConditionTrue
	cond.Reason = ReasonAvailable
	cond.Message = fmt.Sprintf("%s running, serving %s", plural(len(provisioners), "provisioner", "provisioners"), plural(len(classes), "class", "classes"))
	return cond
}

func servedBy(classes []string, ref, state string) string {
	if len(classes) == 0 {
		return fmt.Sprintf("%s serves no class in use and is %s", ref, strings.TrimPrefix(state, "which has "))
	}
	return fmt.Sprintf("%s %s served by %s, %s", strings.Join(classes, ", "), isAre(len(classes)), ref, state)
}

func waitClause(bundles, deployments int32) string {
	var parts []string
	if bundles > 0 {
		parts = append(parts, plural(int(bundles), "bundle", "bundles"))
	}
	if deployments > 0 {
		parts = append(parts, plural(int(deployments), "bundle deployment", "bundle deployments"))
	}
	if len(parts) == 0 {
		return ""
	}
	verb := "wait"
	if bundles+deployments == 1 {
		verb = "waits"
	}
	return fmt.Sprintf("; %s %s for it", strings.Join(parts, " and "), verb)
}

func nameClause(bundles, deployments int32) string {
	var parts []string
	if bundles > 0 {
		parts = append(parts, plural(int(bundles), "bundle", "bundles"))
	}
	if deployments > 0 {
		parts = append(parts, plural(int(deployments), "bundle deployment", "bundle deployments"))
	}
	return strings.Join(parts, " and ") + " name"
}

func sourcesValidCondition(invalid []InvalidSource) metav1.Condition {
	if len(invalid) == 0 {
		return metav1.Condition{Type: ConditionSourcesValid, Status: metav1.ConditionTrue, Reason: ReasonValid, Message: "every source object could be read"}
	}
	sorted := append([]InvalidSource(nil), invalid...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Kind != sorted[j].Kind {
			return sorted[i].Kind < sorted[j].Kind
		}
		return sorted[i].Name < sorted[j].Name
	})
	const shown = 5
	var parts []string
	for i, s := range sorted {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(sorted)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s", s.Kind, s.Name, s.Problem))
	}
	return metav1.Condition{
		Type:    ConditionSourcesValid,
		Status:  metav1.ConditionFalse,
		Reason:  ReasonInvalidSource,
		Message: fmt.Sprintf("%s ignored: %s", plural(len(sorted), "source object", "source objects"), strings.Join(parts, "; ")),
	}
}

func latestWrite(in Input) time.Time {
	var times []time.Time
	for _, w := range in.Workloads {
		times = append(times, w.LastWrite)
	}
	for _, list := range [][]BundleRef{in.Bundles, in.BundleDeployments} {
		for _, b := range list {
			times = append(times, b.LastWrite)
		}
	}
	return conditions.Latest(in.Floor, times...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
