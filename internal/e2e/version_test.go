package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// semverPattern is the grammar of semver.org 2.0.0 (its recommended expression).
var semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

func gitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestVersionScript runs scripts/version.sh in a copy of its checkout at each
// state a build can come from: a tarball, a clone before the first tag, a
// tag, commits after it, uncommitted changes.
func TestVersionScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(root, "scripts", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := "dist:\n  name: otelcol-ragprecision\n  version: 0.2.0-dev\n"
	writeFile(t, dir, "builder-config.yaml", manifest)

	version := func(t *testing.T) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(dir, "scripts", "version.sh")).CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/version.sh: %v\n%s", err, out)
		}
		v := strings.TrimSpace(string(out))
		if !semverPattern.MatchString(v) {
			t.Errorf("%q is not a semantic version", v)
		}
		return v
	}
	check := func(t *testing.T, state, want string) {
		t.Helper()
		if got := version(t); got != want {
			t.Errorf("%s: version %q, want %q", state, got, want)
		}
	}

	check(t, "a tarball (no git)", "0.2.0-dev")

	gitOutput(t, dir, "init", "-q")
	gitOutput(t, dir, "add", ".")
	gitOutput(t, dir, "commit", "-qm", "first")
	sha := gitOutput(t, dir, "rev-parse", "--short", "HEAD")
	check(t, "no tag yet", "0.2.0-dev+g"+sha)
	writeFile(t, dir, "builder-config.yaml", manifest+"# changed\n")
	check(t, "no tag, uncommitted change", "0.2.0-dev+g"+sha+".dirty")
	gitOutput(t, dir, "checkout", "-q", "builder-config.yaml")

	gitOutput(t, dir, "tag", "-a", "-m", "v0.2.0", "v0.2.0")
	gitOutput(t, dir, "tag", "not-a-release") // only vX.Y.Z tags count
	check(t, "the tagged commit", "0.2.0")

	writeFile(t, dir, "README.md", "after the release\n")
	gitOutput(t, dir, "add", ".")
	gitOutput(t, dir, "commit", "-qm", "second")
	sha = gitOutput(t, dir, "rev-parse", "--short", "HEAD")
	check(t, "a commit after the tag", "0.2.0-1-g"+sha)
	writeFile(t, dir, "README.md", "changed\n")
	check(t, "after the tag, uncommitted change", "0.2.0-1-g"+sha+"-dirty")

	// The manifest's version must be the next one with -dev: a release
	// version there would make a build of any commit look like the release.
	writeFile(t, dir, "builder-config.yaml", "dist:\n  version: 0.2.0\n")
	if out, err := exec.Command(filepath.Join(dir, "scripts", "version.sh")).CombinedOutput(); err == nil {
		t.Errorf("dist.version 0.2.0 (no -dev) was accepted: %s", out)
	}
}

// TestImageTagIsTheVersion: `make image` tags the image with the version
// (`+` made `_`, which tags do not allow) and passes it to the Dockerfile,
// and IMAGE= still names it.
func TestImageTagIsTheVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"VERSION=0.2.0-dev+gabc1234.dirty"}, "--build-arg VERSION=0.2.0-dev+gabc1234.dirty -t otelcol-ragprecision:0.2.0-dev_gabc1234.dirty ."},
		{[]string{"VERSION=0.2.0"}, "--build-arg VERSION=0.2.0 -t otelcol-ragprecision:0.2.0 ."},
		{[]string{"VERSION=0.2.0", "IMAGE=registry.example.com/rp:x"}, "--build-arg VERSION=0.2.0 -t registry.example.com/rp:x ."},
	} {
		// -n prints the recipes without running them.
		args := append([]string{"-C", repoRoot(t), "-n", "image", "CONTAINER_ENGINE=buildah"}, c.args...)
		out, err := exec.Command("make", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("make image %s does not build with %q:\n%s", strings.Join(c.args, " "), c.want, out)
		}
	}
}

// TestVersionFlag: the built distribution prints the version of the checkout
// it was built from, which is git describe's when a release tag is reachable.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	bin := collectorBinary(t)
	root := repoRoot(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	want, err := exec.Command(filepath.Join(root, "scripts", "version.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/version.sh: %v", err)
	}
	if got, w := strings.TrimSpace(string(out)), "otelcol-ragprecision version "+strings.TrimSpace(string(want)); got != w {
		t.Errorf("--version printed %q, want %q (rebuild with make build after a commit or tag)", got, w)
	}
	cmd := exec.Command("git", "describe", "--tags", "--match", "v[0-9]*.[0-9]*.[0-9]*", "--dirty")
	cmd.Dir = root
	if d, err := cmd.Output(); err == nil {
		if got, w := strings.TrimSpace(string(want)), strings.TrimPrefix(strings.TrimSpace(string(d)), "v"); got != w {
			t.Errorf("scripts/version.sh says %q, git describe %q", got, w)
		}
	} else {
		t.Logf("no release tag reachable: the version is builder-config.yaml's with the commit, %s", want)
	}
}
