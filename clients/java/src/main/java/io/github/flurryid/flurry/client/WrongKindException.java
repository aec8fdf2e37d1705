package io.github.flurryid.flurry.client;

/**
 * {@code next} was called on a namespace that issues text IDs (uuidv7, objectid),
 * or {@code nextText} on one that issues integers.
 */
public class WrongKindException extends RefusedException {
    private static final long serialVersionUID = 1L;

    WrongKindException(String namespace, String server, String detail) {
        super("wrong_kind", namespace, server, detail,
            "use nextText for uuidv7 and objectid namespaces, next and nextMany for the others", null);
    }
}
