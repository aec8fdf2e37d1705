package io.github.flurryid.flurry.client;

/**
 * The server refused the request itself (Connect INVALID_ARGUMENT or OUT_OF_RANGE,
 * HTTP 400), such as a count above its max_count or an ID that is not one of the
 * namespace's.
 */
public class BadRequestException extends RefusedException {
    private static final long serialVersionUID = 1L;

    BadRequestException(String namespace, String server, String detail, Throwable cause) {
        super("bad_request", namespace, server, detail,
            "ask for fewer IDs at once (the builder's batch, or the count) or fix the request", cause);
    }
}
