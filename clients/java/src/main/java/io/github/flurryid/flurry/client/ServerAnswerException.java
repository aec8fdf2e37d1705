package io.github.flurryid.flurry.client;

/**
 * An answer of a server that is an error: the Connect protocol's code and message,
 * or, for an answer that is not a Connect error (a proxy's page, a broken body,
 * IDs that break the contract), the code its HTTP status maps to. It is the cause
 * of a {@link RefusedException}, and an attempt's error in an
 * {@link UnavailableException}.
 */
public class ServerAnswerException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String connectCode;
    private final int status;

    ServerAnswerException(String connectCode, String message, int status) {
        super(message);
        this.connectCode = connectCode;
        this.status = status;
    }

    /** An answer of HTTP 200 that breaks the contract: a failure of that server. */
    static RuntimeException broken(String message) {
        return new BrokenAnswer(new ServerAnswerException("internal", message, 200));
    }

    /** The Connect code: "not_found", "unavailable", "invalid_argument", ... */
    public String connectCode() {
        return connectCode;
    }

    /** The HTTP status of the answer. */
    public int status() {
        return status;
    }

    /** Carries a ServerAnswerException out of code that cannot throw a checked one. */
    static final class BrokenAnswer extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BrokenAnswer(ServerAnswerException cause) {
            super(cause.getMessage(), cause);
        }

        ServerAnswerException answer() {
            return (ServerAnswerException) getCause();
        }
    }
}
