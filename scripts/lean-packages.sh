#!/usr/bin/env bash
# The packages whose lean default build (no tags) differs from the flurry_full
# build: those with a file of their own that only the lean build compiles (a
# build constraint such as !(flurry_full || flurry_sql)), and the packages that
# import one of them. Every other package compiles the same files, against the
# same imports, in both builds, so `make lint` vets and staticchecks it once,
# with -tags flurry_full, and runs the lean passes on these alone. One import
# path per line; none when no file is lean-only.
#
#   scripts/lean-packages.sh
set -euo pipefail
cd "$(dirname "$0")/.."

files='{{$p := .ImportPath}}{{range .GoFiles}}{{$p}}|{{.}}
{{end}}{{range .CgoFiles}}{{$p}}|{{.}}
{{end}}{{range .TestGoFiles}}{{$p}}|{{.}}
{{end}}{{range .XTestGoFiles}}{{$p}}|{{.}}
{{end}}'
lean_only=$(comm -23 <(go list -f "$files" ./... | sort -u) <(go list -tags flurry_full -f "$files" ./... | sort -u) | cut -d'|' -f1 | sort -u)
[ -z "$lean_only" ] && exit 0
# Their importers in the lean build (a lean-only file may change what a package
# offers to them).
go list -f '{{.ImportPath}} {{join .Deps " "}}' ./... | awk -v want="$lean_only" '
	BEGIN { n = split(want, w, "\n"); for (i = 1; i <= n; i++) lean[w[i]] = 1 }
	{ for (i = 1; i <= NF; i++) if ($i in lean) { print $1; break } }' | sort -u
