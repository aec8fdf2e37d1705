package io.github.flurryid.flurry.client;

/**
 * The base of every exception the client throws itself; unchecked, so that
 * {@code long id = client.next("orders")} needs no try block where a failure
 * should propagate. Branch on the subclass or on {@link #code()}:
 * <ul>
 *   <li>{@link RefusedException} and its subclasses ({@link UnknownNamespaceException},
 *       {@link UnauthorizedException}, {@link BadRequestException},
 *       {@link WrongKindException}): a server refused for a reason every server
 *       would repeat, so the client did not fail over; retrying will not help.</li>
 *   <li>{@link UnavailableException}: every server was tried and each failed.</li>
 *   <li>{@link MixException}: two of the servers can issue the same IDs of the namespace.</li>
 *   <li>{@link FlurryTimeoutException}: the caller's own bound of the call passed.</li>
 *   <li>{@link FlurryInterruptedException}: the waiting thread was interrupted.</li>
 *   <li>{@link ClosedException}: the client was closed.</li>
 * </ul>
 * Wrong options and arguments throw {@link IllegalArgumentException}.
 */
public class FlurryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String code;

    FlurryException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /**
     * What kind of failure this is, stable for programs to branch on:
     * {@code unknown_namespace}, {@code unauthorized}, {@code bad_request},
     * {@code wrong_kind}, {@code unavailable}, {@code mixed}, {@code timeout},
     * {@code interrupted} or {@code closed} (the TypeScript client's codes).
     */
    public String code() {
        return code;
    }
}
