#!/usr/bin/env bash
# Regenerates api/flurryv1 from api/proto/flurry/v1/flurry.proto. The generated code is
# committed, so building flurry needs none of these tools.
#   apt-get install protobuf-compiler
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.19.1
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PATH:$(go env GOPATH)/bin" protoc -I proto \
	--go_out=. --go_opt=module=github.com/flurryid/flurry \
	--connect-go_out=. --connect-go_opt=module=github.com/flurryid/flurry \
	api/proto/flurry/v1/flurry.proto
