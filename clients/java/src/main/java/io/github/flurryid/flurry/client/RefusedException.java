package io.github.flurryid.flurry.client;

/**
 * A server refused the request for a reason every server would repeat: the client
 * did not fail over, and retrying the same call will not help. The subclass says
 * which reason; the cause is the server's answer (a {@link ServerAnswerException}),
 * or none for {@link WrongKindException}.
 */
public class RefusedException extends FlurryException {
    private static final long serialVersionUID = 1L;

    private final String namespace;
    private final String server;

    RefusedException(String code, String namespace, String server, String detail, String hint, Throwable cause) {
        super(code, "namespace " + Json.quote(namespace) + " on " + server + ": " + detail + "; " + hint, cause);
        this.namespace = namespace;
        this.server = server;
    }

    /** The namespace asked for. */
    public String namespace() {
        return namespace;
    }

    /** The base URL of the server that refused. */
    public String server() {
        return server;
    }
}
