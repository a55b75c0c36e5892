# Sourced by the scripts that use the repository's modules as a consumer
# would: without go.work, each module's siblings fetched at the release
# version. localproxy_setup builds a module proxy of this repository from a
# git revision (default HEAD: commit what you want checked) with
# internal/tools/cmd/modproxy, and points the go command at it:
#
#   GOPROXY    the local proxy first, then the module cache's downloads,
#              then the usual proxies (third-party modules as always)
#   GONOSUMDB  the repository's modules: the checksum database cannot know
#              this tree's zips (a released version has other contents)
#   GOMODCACHE a fresh one, so that no zip of an earlier tree is reused
#              under the same version (GOFLAGS -modcacherw: removable;
#              -trimpath: builds are cached whatever the cache's path)
#   GOWORK     off
#
# With MCPADAPTER_LOCALPROXY set to a directory (.ci/run does), the proxy
# and the module cache made there are shared by every script of the run,
# and left for the caller to remove; otherwise localproxy_cleanup removes
# $LOCALPROXY_DIR.

localproxy_setup() {
	local rev="${1:-HEAD}" cache goproxy goflags
	cache="$(go env GOMODCACHE)"
	goproxy="$(go env GOPROXY)"
	goflags="$(go env GOFLAGS)"
	if [[ -n "${MCPADAPTER_LOCALPROXY:-}" ]]; then
		LOCALPROXY_DIR="$MCPADAPTER_LOCALPROXY"
		LOCALPROXY_SHARED=true
	else
		LOCALPROXY_DIR="$(mktemp -d "${TMPDIR:-/tmp}/mcpadapter-proxy.XXXXXX")"
		LOCALPROXY_SHARED=false
	fi
	if [[ ! -d "$LOCALPROXY_DIR/proxy" ]]; then
		go run ./internal/tools/cmd/modproxy -rev "$rev" -out "$LOCALPROXY_DIR/proxy" >/dev/null
	fi
	export GOPROXY="file://$LOCALPROXY_DIR/proxy,file://$cache/cache/download,$goproxy"
	export GONOSUMDB="github.com/mcpadapter/mcpadapter${GONOSUMDB:+,$GONOSUMDB}"
	export GOMODCACHE="$LOCALPROXY_DIR/modcache"
	export GOFLAGS="${goflags:+$goflags }-modcacherw -trimpath"
	export GOWORK=off
}

localproxy_cleanup() {
	if [[ -n "${LOCALPROXY_DIR:-}" && "${LOCALPROXY_SHARED:-false}" == false ]]; then
		chmod -R u+w "$LOCALPROXY_DIR" 2>/dev/null || true
		rm -rf "$LOCALPROXY_DIR"
	fi
}
