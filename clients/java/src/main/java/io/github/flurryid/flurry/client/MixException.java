package io.github.flurryid.flurry.client;

/**
 * Two of the client's servers can issue the same IDs of the namespace: each
 * leases its node value from a store of its own (two servers left on the embedded
 * default, each with its own data directory), from two different stores, or with
 * different layouts. The client compares the servers' info before it takes a
 * server's IDs for the first time, and refuses the namespace from then on.
 */
public class MixException extends FlurryException {
    private static final long serialVersionUID = 1L;

    private final String namespace;
    private final String first;
    private final String second;
    private final String reason;

    MixException(String namespace, String first, String second, String reason) {
        super("mixed", "servers " + first + " and " + second + " can issue the same IDs of namespace "
            + Json.quote(namespace) + ", so the client uses neither for it: " + reason
            + "; give the servers one shared store (or distinct fixed node values), or give the client only servers that share one",
            null);
        this.namespace = namespace;
        this.first = first;
        this.second = second;
        this.reason = reason;
    }

    /** The namespace asked for. */
    public String namespace() {
        return namespace;
    }

    /** The first of the two servers, in the order they were given. */
    public String first() {
        return first;
    }

    /** The second of the two servers. */
    public String second() {
        return second;
    }

    /** Why their IDs can collide. */
    public String reason() {
        return reason;
    }
}
