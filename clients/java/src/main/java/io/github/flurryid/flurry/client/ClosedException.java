package io.github.flurryid.flurry.client;

/** The client was closed: build a new one to go on. */
public class ClosedException extends FlurryException {
    private static final long serialVersionUID = 1L;

    ClosedException() {
        super("closed", "the flurry client is closed; build a new FlurryClient to ask for more IDs", null);
    }
}
