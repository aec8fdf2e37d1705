package io.github.flurryid.flurry.client;

import java.util.Collections;
import java.util.List;

/**
 * No server could issue IDs: each was tried, in failover order, and each failed
 * (refused the connection, did not answer within the timeout, answered
 * UNAVAILABLE because its namespace is exhausted, fenced or its store is down, or
 * answered something broken). {@link #attempts()} says how, in the order tried.
 */
public class UnavailableException extends FlurryException {
    private static final long serialVersionUID = 1L;

    /** One server's failure. */
    public static final class Attempt {
        private final String server;
        private final Throwable error;

        Attempt(String server, Throwable error) {
            this.server = server;
            this.error = error;
        }

        /** The server's base URL. */
        public String server() {
            return server;
        }

        /** What went wrong: a network error, no answer in time, or the server's answer. */
        public Throwable error() {
            return error;
        }
    }

    private final String namespace;
    private final List<Attempt> attempts;

    UnavailableException(String namespace, List<Attempt> attempts) {
        super("unavailable", message(namespace, attempts),
            attempts.isEmpty() ? null : attempts.get(attempts.size() - 1).error);
        this.namespace = namespace;
        this.attempts = Collections.unmodifiableList(attempts);
    }

    private static String message(String namespace, List<Attempt> attempts) {
        StringBuilder b = new StringBuilder("no server could issue IDs of namespace ").append(Json.quote(namespace));
        if (attempts.isEmpty()) {
            b.append(" (no server was tried)");
        } else {
            b.append(": ");
            for (int k = 0; k < attempts.size(); k++) {
                if (k > 0) {
                    b.append("; ");
                }
                b.append(attempts.get(k).server).append(": ").append(attempts.get(k).error.getMessage());
            }
        }
        return b.append("; check that the servers run and are reachable, then retry").toString();
    }

    /** The namespace asked for ("" for info about every namespace). */
    public String namespace() {
        return namespace;
    }

    /** One entry per server tried, in the order tried. */
    public List<Attempt> attempts() {
        return attempts;
    }
}
