#!/bin/sh
# Prints the version of this checkout, which `make build` stamps into the
# binary (otelcol-ragprecision --version, the builder's dist.version) and
# `make image` into the image's tag. docs/RELEASING.md says what each form
# means:
#   0.1.0                    a release: the commit tagged v0.1.0
#   0.1.0-3-gabc1234         git describe: 3 commits after v0.1.0
#   0.1.0-3-gabc1234-dirty   the same, with uncommitted changes
#   0.2.0-dev+gabc1234       no release tag reachable (none yet, or a shallow
#                            clone): the next version, dist.version of
#                            builder-config.yaml, and the commit
#   0.2.0-dev+gabc1234.dirty the same, with uncommitted changes
#   0.2.0-dev                no git at all (a tarball): that version alone
# Every form is a valid semantic version.
set -eu
cd "$(dirname "$0")/.."

next=$(sed -n 's/^  version: *//p' builder-config.yaml)
case "$next" in
  *-dev) ;;
  *) echo "scripts/version.sh: builder-config.yaml's dist.version is \"$next\", not the next version with -dev (e.g. 0.2.0-dev)" >&2; exit 1 ;;
esac

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "$next"
elif d=$(git describe --tags --match 'v[0-9]*.[0-9]*.[0-9]*' --dirty 2>/dev/null); then
  echo "${d#v}"
else
  sha=$(git rev-parse --short HEAD)
  dirty=
  git update-index -q --refresh >/dev/null 2>&1 || true
  git diff-index --quiet HEAD -- || dirty=.dirty
  echo "$next+g$sha$dirty"
fi
