#!/usr/bin/env bash
# deploy/ui/vendor.sh — refresh the analyst workspace's vendored libraries from npm.
#
# The workspace (pipelines/src/serve/ui/) draws graphs with Cytoscape.js and series with uPlot.
# Their minified dist files and licences are committed under pipelines/src/serve/ui/vendor/ and
# compiled into the binary (include_bytes!), so a cargo build needs no npm and the browser loads
# nothing from another host. Run this only to move to other versions (edit them below), then
# rebuild and run the browser test (tests/tests/workspace_browser.rs).
set -euo pipefail
CYTOSCAPE=3.35.0
UPLOT=1.6.32
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/../../pipelines/src/serve/ui/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "cytoscape@$CYTOSCAPE" "uplot@$UPLOT" >/dev/null
mkdir -p cytoscape uplot "$out"
tar -xzf "cytoscape-$CYTOSCAPE.tgz" -C cytoscape --strip-components=1
tar -xzf "uplot-$UPLOT.tgz" -C uplot --strip-components=1
cp cytoscape/dist/cytoscape.min.js "$out/cytoscape.min.js"
cp cytoscape/LICENSE "$out/cytoscape.LICENSE"
cp uplot/dist/uPlot.iife.min.js "$out/uPlot.iife.min.js"
cp uplot/dist/uPlot.min.css "$out/uPlot.min.css"
cp uplot/LICENSE "$out/uPlot.LICENSE"
printf 'cytoscape %s\nuplot %s\n' "$CYTOSCAPE" "$UPLOT" >"$out/VERSIONS"
echo "vendored into $out:"
ls -l "$out"
