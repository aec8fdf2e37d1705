package io.github.flurryid.flurry.client;

/**
 * The bound the caller gave a call passed before it had its IDs. A refill it
 * waited for goes on in the background, and its IDs serve later calls.
 */
public class FlurryTimeoutException extends FlurryException {
    private static final long serialVersionUID = 1L;

    FlurryTimeoutException(String message) {
        super("timeout", message, null);
    }
}
