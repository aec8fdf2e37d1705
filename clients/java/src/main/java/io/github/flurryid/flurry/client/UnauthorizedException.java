package io.github.flurryid.flurry.client;

/**
 * The server refused the token, or its absence (Connect UNAUTHENTICATED or
 * PERMISSION_DENIED, HTTP 401/403).
 */
public class UnauthorizedException extends RefusedException {
    private static final long serialVersionUID = 1L;

    UnauthorizedException(String namespace, String server, String detail, Throwable cause) {
        super("unauthorized", namespace, server, detail,
            "pass a token the namespace accepts (the builder's token or token(namespace, token))", cause);
    }
}
