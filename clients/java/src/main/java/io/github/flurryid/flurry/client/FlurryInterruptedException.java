package io.github.flurryid.flurry.client;

/**
 * The thread waiting for IDs was interrupted. The thread's interrupt status is set
 * again before this is thrown, so that the code above still sees it.
 */
public class FlurryInterruptedException extends FlurryException {
    private static final long serialVersionUID = 1L;

    FlurryInterruptedException(String namespace, InterruptedException cause) {
        super("interrupted", "interrupted while waiting for IDs of namespace " + Json.quote(namespace), cause);
    }
}
