package server

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/flurryid/flurry/server/config"
)

// CORS: pages on the origins of cors.origins may call every route from a
// browser. The answers name the caller's origin exactly and never allow
// credentials: tokens travel in the Authorization header, which a preflight
// allows like any other request header, so no cookie or TLS client
// certificate of the user's browser is ever sent for them.

// corsAllowHeaders are the request headers the clients send: the plain routes'
// Authorization and Accept, the Connect protocol's (the TypeScript client's)
// and gRPC-Web's.
const corsAllowHeaders = "Authorization, Accept, Content-Type, Connect-Protocol-Version, Connect-Timeout-Ms, " +
	"Connect-Accept-Encoding, Connect-Content-Encoding, Grpc-Timeout, Grpc-Accept-Encoding, X-Grpc-Web, X-User-Agent"

// corsExposeHeaders are the response headers a client reads beyond those a
// browser always shows: why to wait, which token failed, gRPC-Web's status and
// who answered.
const corsExposeHeaders = "Retry-After, Www-Authenticate, Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin, " + ServerHeader

// cors wraps h with the answers cors.origins asks for; with no origins it is h.
func (s *Server) cors(c config.CORS, h http.Handler) http.Handler {
	if len(c.Origins) == 0 {
		return h
	}
	origins := slices.Clone(c.Origins)
	maxAge := []string{strconv.Itoa(int(c.MaxAge.Or(config.DefaultCORSMaxAge).Seconds()))}
	vary, methods := []string{"Origin"}, []string{"GET, POST"}
	allow, expose := []string{corsAllowHeaders}, []string{corsExposeHeaders}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd["Vary"] = append(hd["Vary"], vary...) // the answer depends on Origin, for every cache between
		origin := header(r, "Origin")
		if origin == "" {
			h.ServeHTTP(w, r)
			return
		}
		ok := slices.Contains(origins, origin)
		preflight := r.Method == http.MethodOptions && header(r, "Access-Control-Request-Method") != ""
		if preflight {
			hd["Vary"] = append(hd["Vary"], "Access-Control-Request-Method", "Access-Control-Request-Headers")
			if !ok {
				s.writeError(w, fmtJSON, &apiError{status: http.StatusForbidden,
					msg: "origin " + clip(origin) + " may not call this server from a browser; add it to cors.origins in the server's configuration"})
				return
			}
			hd["Access-Control-Allow-Origin"] = []string{origin}
			hd["Access-Control-Allow-Methods"] = methods
			hd["Access-Control-Allow-Headers"] = allow
			hd["Access-Control-Max-Age"] = maxAge
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if ok {
			hd["Access-Control-Allow-Origin"] = []string{origin}
			hd["Access-Control-Expose-Headers"] = expose
		}
		h.ServeHTTP(w, r)
	})
}
