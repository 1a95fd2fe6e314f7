package shellrisk

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// compound100 is a compound command of about 100 bytes with an escalation
// hidden behind two wrappers.
const compound100 = "cd src && ls -la | grep foo; timeout 5 env FOO=1 rm -rf ../build && git status && echo done > out.txt"

// script2KB is a realistic build-and-release script of about 2 KB.
const script2KB = `#!/usr/bin/env bash
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VERSION="${1:-dev}"
OUT=dist
GOFLAGS="-trimpath"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [[ ! -d "$OUT" ]]; then
  mkdir -p "$OUT"
fi

log "cleaning old artefacts"
rm -rf "$OUT"/*.tar.gz build/tmp

log "running checks"
go vet ./...
go test -count=1 ./... 2>&1 | tee test.log
if grep -q FAIL test.log; then
  log "tests failed"
  exit 1
fi

for os in linux darwin windows; do
  for arch in amd64 arm64; do
    ext=""
    [[ "$os" == windows ]] && ext=".exe"
    log "building $os/$arch"
    GOOS=$os GOARCH=$arch go build $GOFLAGS -ldflags "-s -w -X main.version=$VERSION" \
      -o "build/$os-$arch/app$ext" ./cmd/app
    tar -czf "$OUT/app-$VERSION-$os-$arch.tar.gz" -C "build/$os-$arch" .
  done
done

log "checksums"
(cd "$OUT" && sha256sum *.tar.gz > SHA256SUMS)

case "$VERSION" in
  dev)
    log "dev build, not publishing"
    ;;
  v*)
    git tag -a "$VERSION" -m "release $VERSION"
    git push origin "$VERSION"
    gh release create "$VERSION" "$OUT"/*.tar.gz "$OUT/SHA256SUMS" --notes-file CHANGELOG.md
    ;;
  *)
    log "unknown version $VERSION"
    exit 2
    ;;
esac

cat > "$OUT/manifest.json" <<JSON
{"version": "$VERSION", "commit": "$(git rev-parse HEAD)"}
JSON

find build -name '*.tmp' -delete
docker build -t "app:$VERSION" .
log "done"
`

func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{{"compound100", compound100}, {"script2KB", script2KB}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.cmd)))
			for b.Loop() {
				Analyze(bc.cmd, testEnv)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{{"compound100", compound100}, {"script2KB", script2KB}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.cmd)))
			p := syntax.NewParser(syntax.Variant(syntax.LangBash))
			var r strings.Reader
			for b.Loop() {
				r.Reset(bc.cmd)
				if _, err := p.Parse(&r, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
