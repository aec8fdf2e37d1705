package io.github.flurryid.flurry.client;

/** The server does not know the namespace (Connect NOT_FOUND, HTTP 404). */
public class UnknownNamespaceException extends RefusedException {
    private static final long serialVersionUID = 1L;

    UnknownNamespaceException(String namespace, String server, String detail, Throwable cause) {
        super("unknown_namespace", namespace, server, detail,
            "check the namespace's name, and that the servers' configuration defines it", cause);
    }
}
